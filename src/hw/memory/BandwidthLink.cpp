#include "bwsim/hw/memory/BandwidthLink.hpp"

#include <algorithm>
#include <cmath>

namespace bwsim {

Cycle BandwidthLink::transfer(Cycle arrival, std::uint64_t bytes) {
  const double start = std::max(static_cast<double>(arrival), free_);
  const double cycles = static_cast<double>(bytes) / bytes_per_cycle_;
  free_ = start + cycles;
  busy_ += cycles;
  bytes_ += static_cast<double>(bytes);
  return static_cast<Cycle>(std::ceil(free_));
}

}  // namespace bwsim
