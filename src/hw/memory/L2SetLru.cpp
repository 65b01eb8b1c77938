#include "bwsim/hw/memory/L2SetLru.hpp"

#include <algorithm>
#include <cstdint>

namespace bwsim {

L2SetLru::L2SetLru(std::uint64_t capacity_blocks, const L2SetGeometry& geometry)
    : L2SetAssociative(capacity_blocks, geometry), last_use_(way_slots(), 0) {}

// The set's least recently used way: the smallest stamp, found in two passes the compiler
// vectorizes (the minimum, then where it is).
std::size_t L2SetLru::least_recent(std::size_t first) const {
  const std::uint32_t* const u = last_use_.data() + first;
  std::uint32_t oldest = UINT32_MAX;
  for (std::uint32_t w = 0; w < ways_; ++w) oldest = std::min(oldest, u[w]);
  std::uint32_t w = 0;
  while (u[w] != oldest) ++w;
  return first + w;
}

void L2SetLru::access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) {
  prefetch_sets(keys, last_use_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const Slot s = find(keys[i]);
    std::size_t way = s.way;
    if (!s.hit) {
      if (way == s.first + ways_) way = least_recent(s.first);  // a full set
      fill(s, way);
    }
    if (accesses_ == UINT32_MAX) {
      for (std::uint32_t& u : last_use_) u >>= 1;
      accesses_ >>= 1;
    }
    last_use_[way] = ++accesses_;
    out[i] = touch(way, s.hit);
  }
}

}  // namespace bwsim
