#pragma once
// The controller that sets the SM clock of a sustained run, period by period; config
// power.clock_controller chooses it by name. It acts once per power.period_ms of modeled wall time
// (one virtual call per period, not per event).
#include <memory>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/core/ModelRegistry.hpp"

namespace bwsim {

struct KernelEnergy;
class PowerModel;

class ClockController {
 public:
  virtual ~ClockController() = default;
  // The next period's clock, given this period's clock and the board's power in it; `start_ghz`
  // is the clock the kernel started at (the most the SM gives it).
  virtual double next_clock_ghz(double ghz, double watts, double start_ghz, const KernelEnergy& energy,
                                const PowerModel& model) const = 0;
};

// "limit_step": one power.step_mhz step down per period while the power is over power.limit_w
// (not below min_clock_ghz), one up while the step up stays within it (not above the start clock).
// "fixed": holds the start clock whatever the power (a board without a limit; the cycle count's
// time at the start clock).
using ClockControllerRegistry =
    ModelRegistry<ConfigError, std::unique_ptr<ClockController>, const HardwareConfig::Power&>;
const ClockControllerRegistry& clock_controllers();

}  // namespace bwsim
