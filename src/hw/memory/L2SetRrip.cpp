#include "bwsim/hw/memory/L2SetRrip.hpp"

#include <algorithm>

namespace bwsim {

L2SetRrip::L2SetRrip(std::uint64_t capacity_blocks, const L2SetGeometry& geometry)
    : L2SetAssociative(capacity_blocks, geometry), rrpv_(way_slots(), kDistant) {}

void L2SetRrip::access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) {
  prefetch_sets(keys, rrpv_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const Slot s = find(keys[i]);
    std::size_t way = s.way;
    if (s.hit) {
      rrpv_[way] = 0;
    } else {
      if (way == s.first + ways_) {
        // The first way predicted distant, aging the set until one is.
        std::uint8_t* const r = rrpv_.data();
        const std::uint8_t oldest = *std::max_element(r + s.first, r + s.first + ways_);
        for (std::size_t w = s.first; w != s.first + ways_; ++w) r[w] = static_cast<std::uint8_t>(r[w] + (kDistant - oldest));
        way = static_cast<std::size_t>(std::find(r + s.first, r + s.first + ways_, kDistant) - r);
      }
      fill(s, way);
      rrpv_[way] = kInserted;
    }
    out[i] = touch(way, s.hit);
  }
}

}  // namespace bwsim
