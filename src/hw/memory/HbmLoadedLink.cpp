#include "bwsim/hw/memory/HbmLoadedLink.hpp"

#include <algorithm>
#include <cmath>

namespace bwsim {

HbmLoadedLink::HbmLoadedLink(const HardwareConfig& config, double share)
    : link_(config.hbm.gbytes_per_second * share / config.clock_ghz),
      latency_(config.hbm.latency),
      loaded_(config.hbm.loaded),
      bucket_cycles_(std::max<Cycle>(1, config.hbm.loaded.window / kBuckets)) {
  if (!loaded_.present) throw ConfigError(config.source + ": hbm.model loaded_link needs the section hbm.loaded");
}

void HbmLoadedLink::reset() {
  link_.reset();
  through_at_start_.fill(0);
  newest_ = 0;
}

double HbmLoadedLink::load_at(Cycle at) {
  const Cycle bucket = at / bucket_cycles_;
  // Snapshots never go back: a request that arrived a little after a bucket's start (events of
  // one cycle come in any order) would make the fluid link's count there look lower.
  double last = through_at_start_[newest_ % kBuckets];
  for (Cycle b = std::max(newest_ + 1, bucket >= kBuckets ? bucket - kBuckets + 1 : 0); b <= bucket; ++b)
    last = through_at_start_[b % kBuckets] = std::max(last, link_.bytes_through(b * bucket_cycles_));
  newest_ = std::max(newest_, bucket);  // a request a little out of order measures from the newest
  // The window runs from the start of the oldest bucket still in the ring (time 0 early on).
  const Cycle oldest = newest_ >= kBuckets - 1 ? newest_ - (kBuckets - 1) : 0;
  const Cycle now = std::max(at, oldest * bucket_cycles_ + 1);
  const double moved = link_.bytes_through(now) - through_at_start_[oldest % kBuckets];
  return moved / (link_.bytes_per_cycle() * static_cast<double>(now - oldest * bucket_cycles_));
}

Cycle HbmLoadedLink::added_latency(double u) const {
  u = std::clamp(u, 0.0, loaded_.max_load);
  const double step = static_cast<double>(loaded_.step_latency) * std::min(1.0, u / loaded_.step_load);
  const double queue = static_cast<double>(loaded_.queue_latency) * u / (1.0 - u);
  return static_cast<Cycle>(std::lround(step + queue));
}

HbmAccess HbmLoadedLink::transfer(Cycle at, std::uint64_t bytes) {
  const Cycle added = added_latency(load_at(at));
  const Cycle through = link_.transfer(at, bytes);
  return HbmAccess{through, through + latency_ + added};
}

}  // namespace bwsim
