#pragma once
// l2.policy "set_rrip": set-associative with re-reference interval prediction in each set. The
// sets are 2^round(log2(capacity / l2.ways)), indexed by the line address folded onto the set bits
// by XOR (the L2's hash is not published; an even one is what silicon's sharp knee for a cyclic
// footprint asks for, h100_l2_partitions.csv's half0 rows, where a random hash loses lines to
// overfull sets well below capacity). A block comes in predicted distant (2 of 0..3), a hit
// predicts it near (0); a miss evicts a way predicted 3, the first in way order, and when there is
// none ages every way of the set by one until there is. The first such way is not the oldest, so a
// block read once can go soon after it came in, and more often the further its next read: the loss
// grows gradually with the reuse distance (the lag rows), where a fully associative policy (lru,
// clock) keeps every block up to the capacity and none past it (README, "silicon's L2 loses lines
// gradually"; tools/calibration/l2_policy_rows.py compares the policies over those rows).
#include <vector>

#include "bwsim/hw/memory/L2Policy.hpp"

namespace bwsim {

class L2SetRrip final : public L2Policy {
 public:
  // Keys are GMEM addresses of `line_bytes`-aligned lines.
  L2SetRrip(std::uint64_t capacity_blocks, std::uint32_t ways, std::uint32_t line_bytes);
  void access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) override;
  std::uint64_t resident_blocks() const override { return resident_; }
  void clear_in_flight() override;

 private:
  static constexpr std::uint8_t kDistant = 3, kInserted = 2;
  static constexpr std::uint32_t kEmpty = 0, kPadding = 0xffffffff;  // tags of a way without a block, of no way
  static constexpr std::uint32_t kTagsPerWord = 2;
  std::uint64_t set_of(std::uint64_t key) const;
  std::uint32_t tag_of(std::uint64_t key) const;
  std::size_t find_way(std::size_t first, std::uint32_t tag) const;

  std::uint64_t line_bytes_;  // the keys' unit
  std::uint32_t set_bits_;
  std::uint64_t sets_;   // a power of two: 2^round(log2(capacity / l2.ways))
  std::uint32_t ways_;   // capacity / sets_, so l2.ways is honoured within a factor of sqrt(2)
  std::uint32_t stride_; // ways_ rounded up to whole words of tags (the rest kPadding)
  // sets_ x stride_ each, a set's ways together.
  std::vector<std::uint32_t> tags_;
  std::vector<std::uint8_t> rrpv_;
  std::vector<L2InFlight> in_flight_;
  std::uint64_t resident_ = 0;
};

}  // namespace bwsim
