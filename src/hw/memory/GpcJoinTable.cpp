#include "bwsim/hw/memory/GpcJoinTable.hpp"

#include <algorithm>
#include <bit>

namespace bwsim {

GpcJoinTable::GpcJoinTable(std::uint64_t slots)
    : slots_(std::bit_ceil(std::max<std::uint64_t>(slots, 2))),
      shift_(64 - static_cast<unsigned>(std::countr_zero(slots_.size()))) {}

L2InFlight& GpcJoinTable::of(std::uint64_t line, std::uint32_t gpc) {
  const std::uint64_t key = line << 8 | gpc;
  Slot& s = slots_[(key * 0x9E3779B97F4A7C15ull) >> shift_];  // Fibonacci hashing: the high bits
  if (s.key != key) s = Slot{key, {}};
  return s.last;
}

void GpcJoinTable::clear() { std::fill(slots_.begin(), slots_.end(), Slot{}); }

}  // namespace bwsim
