#pragma once
// A warp's cycles blocked on each mbarrier, by SMEM offset, in the order the barriers were first
// waited on. Every mbarrier wait's resume adds to it, and a full-chip run switches warps at every
// event, so each host cache line the add touches is mostly a miss: the first eight barriers'
// entries sit in one line inside the WarpState, an entry packing the offset + 1 (18 bits cover the
// 228 KiB of SMEM; 20 are kept) above 44 bits of cycles (1.7e13: only a wait on one barrier over
// hours of simulated time would carry into the offset). A warp waiting on more barriers keeps the
// rest in a vector.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

class BarrierWaitTally {
 public:
  void add(std::uint32_t offset, Cycle cycles) {
    if (offset + 1 >= 1u << (64 - kCycleBits)) return add_more(offset, cycles);
    const std::uint64_t key = static_cast<std::uint64_t>(offset + 1) << kCycleBits;
    for (std::uint64_t& e : inline_) {
      if ((e & ~kCycleMask) == key) {
        e += cycles;
        return;
      }
      if (e == 0) {
        e = key | cycles;
        return;
      }
    }
    add_more(offset, cycles);
  }

  // Cycles blocked on all barriers.
  Cycle total() const {
    Cycle sum = 0;
    for (const std::uint64_t e : inline_) sum += e & kCycleMask;
    for (const auto& [o, c] : more_) sum += c;
    return sum;
  }

  // (offset, cycles) per barrier, in the order first waited on.
  std::vector<std::pair<std::uint32_t, Cycle>> entries() const {
    std::vector<std::pair<std::uint32_t, Cycle>> out;
    for (const std::uint64_t e : inline_)
      if (e != 0) out.emplace_back(static_cast<std::uint32_t>(e >> kCycleBits) - 1, e & kCycleMask);
    out.insert(out.end(), more_.begin(), more_.end());
    return out;
  }

 private:
  void add_more(std::uint32_t offset, Cycle cycles) {
    for (auto& [o, c] : more_)
      if (o == offset) {
        c += cycles;
        return;
      }
    more_.emplace_back(offset, cycles);
  }

  static constexpr unsigned kCycleBits = 44;
  static constexpr std::uint64_t kCycleMask = (1ull << kCycleBits) - 1;
  static_assert(kCycleBits + 20 == 64, "offset + 1 takes the top 20 bits");
  std::array<std::uint64_t, 8> inline_{};  // 0: free
  std::vector<std::pair<std::uint32_t, Cycle>> more_;
};

}  // namespace bwsim
