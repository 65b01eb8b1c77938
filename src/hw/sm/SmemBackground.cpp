#include "bwsim/hw/sm/SmemBackground.hpp"

#include <algorithm>
#include <cmath>

namespace bwsim {
namespace {
// What the port keeps for ld/st.shared however busy the units are: a share never reached in the
// measured rows (at most 75 of 128 B/clk taken), so that a transfer always ends (E).
constexpr double kLeastShare = 1.0 / 8;
constexpr std::size_t kDropEvery = 32;  // add() drops the ended intervals each time this many more are kept
}  // namespace

void SmemBackground::drop_ended(Cycle now) {
  std::erase_if(live_, [now](const Interval& i) { return i.end <= now; });
}

void SmemBackground::add(Cycle now, Cycle start, Cycle end, double bytes_per_cycle, Source source) {
  // An SM whose warps never touch ld/st.shared never asks stretch(): drop here too, now and then.
  if (live_.size() >= kDropEvery && live_.size() % kDropEvery == 0) drop_ended(now);
  if (end > start && bytes_per_cycle > 0) live_.push_back({start, end, bytes_per_cycle, source});
}

Cycle SmemBackground::stretch(Cycle now, Cycle from, Cycle port_cycles, double port_bytes_per_cycle,
                              double landing_bytes_per_cycle) {
  drop_ended(now);
  if (live_.empty() || port_cycles == 0) return port_cycles;
  // Walk from `from` over the pieces where the units' total rate is constant, moving the port's
  // share left over in each, until the transfer's port cycles are done.
  double left = static_cast<double>(port_cycles);
  Cycle t = from;
  while (true) {
    double mma = 0, landing = 0;
    Cycle next = kNever;
    for (const Interval& i : live_) {
      if (i.start <= t && t < i.end) {
        (i.source == Source::Mma ? mma : landing) += i.bytes_per_cycle;
        next = std::min(next, i.end);
      } else if (i.start > t) {
        next = std::min(next, i.start);
      }
    }
    const double taken = mma + std::min(landing, landing_bytes_per_cycle);
    const double share = std::max(kLeastShare, 1.0 - taken / port_bytes_per_cycle);
    if (next == kNever || static_cast<double>(next - t) * share >= left)
      return std::max(port_cycles, t - from + static_cast<Cycle>(std::ceil(left / share)));
    left -= static_cast<double>(next - t) * share;
    t = next;
  }
}

}  // namespace bwsim
