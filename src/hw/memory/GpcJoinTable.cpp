#include "bwsim/hw/memory/GpcJoinTable.hpp"

#include <algorithm>
#include <bit>

namespace bwsim {

GpcJoinTable::GpcJoinTable(std::uint64_t slots)
    : slots_(std::bit_ceil(std::max<std::uint64_t>(slots, 2)), Slot{}),
      shift_(64 - static_cast<unsigned>(std::countr_zero(slots_.size()))) {}

void GpcJoinTable::clear() { std::fill(slots_.begin(), slots_.end(), Slot{}); }

}  // namespace bwsim
