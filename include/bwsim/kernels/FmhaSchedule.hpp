#pragma once
// Which attention work unit (256 query rows of one sequence and head: two 128-row Q tiles) each
// CTA of the fmha kernel computes, and in which order. A kernel property, as in the kernels it
// ports:
// - the order: "natural" (query block fastest, then head, then sequence: CUTLASS's and
//   FlashAttention-4's static order) or "lpt" (FlashAttention-4's SingleTileLPTScheduler for
//   causal masks: sections of as many (sequence, head) pairs as have K and V in 50 MiB of L2,
//   rounded down to a power of two; inside a section the query blocks from the last (the longest
//   under a causal mask) to the first, the section's heads fastest);
// - the workers: one CTA per unit (the grid covers the units and the hardware hands them to SMs
//   as SMs free up), or persistent CTAs, worker w taking units w, w + W, w + 2W, ... of the order.
#include <cstdint>
#include <vector>

namespace bwsim {

struct FmhaWorkUnit {
  std::uint32_t b = 0, h = 0, qb = 0;  // sequence, query head, query block (256 rows)
  std::uint32_t kv_tiles = 0;          // K/V tiles of 128 keys it reads (fewer under a causal mask)
};

struct FmhaScheduleParams {
  std::vector<std::uint32_t> lens;  // tokens of each sequence
  std::uint32_t heads = 1;
  std::uint32_t seqlen = 0;         // the padded length (K/V bytes per head for the L2 sections)
  std::uint32_t headdim = 128, headdim_v = 128, element_bytes = 2;
  bool causal = false;
  bool lpt = false;
  std::uint32_t workers = 0;        // persistent CTAs; 0: one CTA per unit
};

class FmhaSchedule {
 public:
  static constexpr std::uint32_t kRowsPerUnit = 256;
  static constexpr std::uint32_t kKeysPerTile = 128;

  explicit FmhaSchedule(const FmhaScheduleParams& p);

  const std::vector<FmhaWorkUnit>& order() const { return order_; }
  std::uint32_t ctas() const { return ctas_; }
  // The k-th unit (0, 1, ...) of CTA `cta`; null when it has no more.
  const FmhaWorkUnit* unit(std::uint32_t cta, std::uint32_t k) const {
    const std::uint64_t at = cta + static_cast<std::uint64_t>(k) * ctas_;
    return at < order_.size() ? &order_[at] : nullptr;
  }
  // The position of `unit(cta, k)` in the order (a stable id, for per-unit random streams).
  std::uint64_t index(std::uint32_t cta, std::uint32_t k) const { return cta + static_cast<std::uint64_t>(k) * ctas_; }
  // (sequence, head) pairs per L2 section of the LPT order.
  std::uint32_t l2_section() const { return section_; }

 private:
  std::vector<FmhaWorkUnit> order_;
  std::uint32_t ctas_ = 0;
  std::uint32_t section_ = 1;
};

}  // namespace bwsim
