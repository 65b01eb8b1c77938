#pragma once
// hbm.model "loaded_link": fifo_link's link and constant latency, plus latency that grows with
// the HBM's recent load. Silicon's HBM latency rises long before its bandwidth is used up (on the
// H100, tools/calibration/h100_hbm_boxes.csv: one 16 KiB box takes 1228 cycles on an idle chip,
// 1377 with 16 SMs loading one box each, 1754 with 132; 132 SMs keeping two boxes in flight get 92%
// of the stream rate, not the 100% a FIFO link reaches), so a kernel with a few loads in flight per
// SM is slower than its bytes / bandwidth. The load u is the bytes this share of the HBM moved in
// the last hbm.loaded.window cycles over what it can move in that time (so at most 1, however
// many requests wait: the FIFO link already charges the wait at saturation); a request arriving
// at load u waits step_latency * min(1, u / step_load) + queue_latency * u / (1 - u) more (u at
// most max_load), the first term the jump any load brings, the second the queueing growth near
// saturation (an M/M/1 shape). Both come from unit rows only (the config cites them).
#include <array>

#include "bwsim/hw/memory/BandwidthLink.hpp"
#include "bwsim/hw/memory/HbmModel.hpp"

namespace bwsim {

class HbmLoadedLink final : public HbmModel {
 public:
  HbmLoadedLink(const HardwareConfig& config, double share);
  void reset() override;
  HbmAccess transfer(Cycle at, std::uint64_t bytes) override;
  Cycle busy_cycles() const override { return link_.busy_cycles(); }

 private:
  static constexpr Cycle kBuckets = 8;  // the window slides in eighths
  // The latency added at load `u` (a fraction of the link's rate).
  Cycle added_latency(double u) const;
  // The load over the window ending at `at`, after sliding the window there.
  double load_at(Cycle at);

  BandwidthLink link_;
  Cycle latency_;
  HardwareConfig::Hbm::Loaded loaded_;
  Cycle bucket_cycles_;
  // Bytes through the link when each of the last kBuckets buckets began (bucket b at b % kBuckets).
  std::array<double, kBuckets> through_at_start_{};
  Cycle newest_ = 0;  // the newest bucket's number (cycle / bucket_cycles_)
};

}  // namespace bwsim
