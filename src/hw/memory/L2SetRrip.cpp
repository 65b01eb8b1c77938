#include "bwsim/hw/memory/L2SetRrip.hpp"

#include <algorithm>

#include "bwsim/core/Bits.hpp"

namespace bwsim {

L2SetRrip::L2SetRrip(std::uint64_t capacity_blocks, std::uint32_t ways)
    : ways_(std::max(1u, ways)), sets_(std::max<std::uint64_t>(1, capacity_blocks / std::max(1u, ways))),
      slots_(sets_ * ways_) {}

std::uint64_t L2SetRrip::set_of(std::uint64_t key) const { return mix64(key) % sets_; }

void L2SetRrip::access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) {
  // Host-cache prefetches only: a box's sets, so that their misses overlap.
  for (const std::uint64_t key : keys) __builtin_prefetch(&slots_[set_of(key) * ways_]);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Way* const first = &slots_[set_of(keys[i]) * ways_];
    Way* const last = first + ways_;
    Way* way = std::find_if(first, last, [&](const Way& w) { return w.valid && w.key == keys[i]; });
    const bool hit = way != last;
    if (hit) {
      way->rrpv = 0;
    } else {
      way = std::find_if(first, last, [](const Way& w) { return !w.valid; });
      if (way == last) {
        // The first way predicted distant, aging the set until one is.
        const std::uint8_t oldest = std::max_element(first, last, [](const Way& a, const Way& b) { return a.rrpv < b.rrpv; })->rrpv;
        for (Way* w = first; w != last; ++w) w->rrpv = static_cast<std::uint8_t>(w->rrpv + (kDistant - oldest));
        way = std::find_if(first, last, [](const Way& w) { return w.rrpv == kDistant; });
      } else {
        ++resident_;
      }
      *way = Way{keys[i], {}, true, kInserted};
    }
    out[i] = L2Touch{hit, way->in_flight, &way->in_flight};
  }
}

void L2SetRrip::clear_in_flight() {
  for (Way& w : slots_) w.in_flight = {};
}

}  // namespace bwsim
