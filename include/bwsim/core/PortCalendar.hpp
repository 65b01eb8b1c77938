#pragma once
// The busy cycles of a port that requests reserve out of time order: the model runs a warp's
// straight-line code ahead of the engine's clock, so a warp reaching the port later in host order
// may want it at an earlier cycle. A request takes the earliest free cycles from its start on,
// filling gaps that earlier-served but later-timed requests left (a FIFO of reservations would
// serve it after them). Busy cycles are kept as sorted, merged intervals; those that ended before
// the engine's clock are dropped, since no request starts before it.
#include <cstdint>
#include <utility>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

class PortCalendar {
 public:
  // Reserves `cycles` free cycles at or after `from` (none earlier than `now`, the engine's clock,
  // are asked for); returns the cycle after the last one reserved.
  Cycle reserve(Cycle now, Cycle from, Cycle cycles);
  // The first cycle at or after `from` that no reservation holds (when the port has drained what
  // was queued on it up to `from`).
  Cycle free_from(Cycle now, Cycle from);
  // Busy intervals kept (for tests).
  std::size_t intervals() const { return busy_.size() - head_; }

 private:
  void drop_before(Cycle now);  // forgets the intervals that ended by `now`

  std::vector<std::pair<Cycle, Cycle>> busy_;  // [start, end), sorted, disjoint, not touching
  std::size_t head_ = 0;                       // intervals before it ended before `now`
};

}  // namespace bwsim
