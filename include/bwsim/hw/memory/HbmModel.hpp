#pragma once
// HBM below the L2; config hbm.model chooses how it is modelled. The L2's misses (loads and
// prefetches) and the stores it writes through reach it as one transfer per TMA box.
#include <cstdint>
#include <memory>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Cycle.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/core/ModelRegistry.hpp"

namespace bwsim {

struct HbmAccess {
  Cycle through = 0;  // the last byte has crossed the HBM link (where the bandwidth counters count it)
  Cycle ready = 0;    // a read's bytes are in the L2
};

class HbmModel {
 public:
  virtual ~HbmModel() = default;
  // A new launch: idle from cycle 0.
  virtual void reset() = 0;
  // Moves `bytes` between HBM and the L2 for a request that reaches it at `at`.
  virtual HbmAccess transfer(Cycle at, std::uint64_t bytes) = 0;
  // Cycles the link spent moving bytes since the launch began.
  virtual Cycle busy_cycles() const = 0;
};

// "fifo_link": one link at hbm.gbytes_per_second in arrival order plus a constant hbm.latency;
// "loaded_link": the same plus latency that grows with the HBM's recent load (hbm.loaded). The
// factory's second argument is the share of the chip's HBM the model serves (a die's stacks:
// 1 / dies.count).
using HbmModelRegistry = ModelRegistry<ConfigError, std::unique_ptr<HbmModel>, const HardwareConfig&, double>;
const HbmModelRegistry& hbm_models();

}  // namespace bwsim
