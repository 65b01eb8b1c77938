#pragma once
// Simulated time: SM clock cycles.
#include <cstdint>
#include <limits>

namespace bwsim {

using Cycle = std::uint64_t;
inline constexpr Cycle kNever = std::numeric_limits<Cycle>::max();

}  // namespace bwsim
