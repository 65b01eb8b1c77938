#include "bwsim/kernels/FmhaSchedule.hpp"

#include <algorithm>
#include <bit>

namespace bwsim {

FmhaSchedule::FmhaSchedule(const FmhaScheduleParams& p) {
  const std::uint32_t pairs = static_cast<std::uint32_t>(p.lens.size()) * p.heads;
  const std::uint32_t blocks = (p.seqlen + kRowsPerUnit - 1) / kRowsPerUnit;  // of the longest sequence
  auto push = [&](std::uint32_t bh, std::uint32_t qb) {
    const std::uint32_t b = bh / p.heads, len = p.lens[b];
    if (qb * kRowsPerUnit >= len) return;  // a shorter sequence of a variable-length batch
    const std::uint32_t keys = p.causal ? std::min(len, (qb + 1) * kRowsPerUnit) : len;
    order_.push_back({b, bh % p.heads, qb, (keys + kKeysPerTile - 1) / kKeysPerTile});
  };
  if (p.lpt) {
    // flash_attn/cute/tile_scheduler.py, SingleTileLPTScheduler: size_l2 = 50 MiB, one head's K
    // and V = seqlen_k (headdim + headdim_v) element bytes.
    const std::uint64_t head_bytes = static_cast<std::uint64_t>(p.seqlen) * (p.headdim + p.headdim_v) * p.element_bytes;
    const std::uint64_t fit = (50ull << 20) / std::max<std::uint64_t>(head_bytes, 1);
    section_ = fit == 0 ? 1 : static_cast<std::uint32_t>(std::bit_floor(std::min<std::uint64_t>(fit, 1u << 30)));
    for (std::uint32_t first = 0; first < pairs; first += section_) {
      const std::uint32_t width = std::min(section_, pairs - first);  // the last section: the remainder
      for (std::uint32_t k = 0; k < blocks; ++k)
        for (std::uint32_t r = 0; r < width; ++r) push(first + r, blocks - 1 - k);
    }
  } else {
    for (std::uint32_t bh = 0; bh < pairs; ++bh)
      for (std::uint32_t qb = 0; qb < blocks; ++qb) push(bh, qb);
  }
  const auto units = static_cast<std::uint32_t>(order_.size());
  ctas_ = p.workers == 0 ? units : std::min(p.workers, units);
}

}  // namespace bwsim
