#pragma once
// hbm.model "fifo_link": one link at its share of hbm.gbytes_per_second shared in arrival order (a fluid FIFO),
// and a read's bytes in the L2 a constant hbm.latency after they have crossed it. No banks,
// refresh, read/write turnaround or queueing latency below saturation.
#include "bwsim/hw/memory/BandwidthLink.hpp"
#include "bwsim/hw/memory/HbmModel.hpp"

namespace bwsim {

class HbmFifoLink final : public HbmModel {
 public:
  HbmFifoLink(const HardwareConfig& config, double share)
      : link_(config.hbm.gbytes_per_second * share / config.clock_ghz), latency_(config.hbm.latency) {}
  void reset() override { link_.reset(); }
  HbmAccess transfer(Cycle at, std::uint64_t bytes) override {
    const Cycle through = link_.transfer(at, bytes);
    return HbmAccess{through, through + latency_};
  }
  Cycle busy_cycles() const override { return link_.busy_cycles(); }

 private:
  BandwidthLink link_;
  Cycle latency_;
};

}  // namespace bwsim
