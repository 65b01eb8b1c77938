#include "bwsim/power/ClockController.hpp"

#include "bwsim/power/PowerModel.hpp"

namespace bwsim {
namespace {

class LimitStep final : public ClockController {
 public:
  explicit LimitStep(const HardwareConfig::Power& p) : p_(p) {}
  double next_clock_ghz(double ghz, double watts, double start_ghz, const KernelEnergy& energy,
                        const PowerModel& model) const override {
    const double step = p_.step_mhz * 1e-3;
    if (watts > p_.limit_w && ghz - step >= p_.min_clock_ghz - 1e-9) return ghz - step;
    if (ghz + step <= start_ghz + 1e-9 && model.power_w(energy, ghz + step) <= p_.limit_w) return ghz + step;
    return ghz;
  }

 private:
  const HardwareConfig::Power& p_;
};

class Fixed final : public ClockController {
 public:
  double next_clock_ghz(double ghz, double, double, const KernelEnergy&, const PowerModel&) const override {
    return ghz;
  }
};

}  // namespace

const ClockControllerRegistry& clock_controllers() {
  static const ClockControllerRegistry registry{
      "power.clock_controller",
      {{"limit_step", "one power.step_mhz step per power.period_ms down while over power.limit_w, up while within it",
        [](const HardwareConfig::Power& p) -> std::unique_ptr<ClockController> { return std::make_unique<LimitStep>(p); }},
       {"fixed", "the start clock throughout, whatever the power",
        [](const HardwareConfig::Power&) -> std::unique_ptr<ClockController> { return std::make_unique<Fixed>(); }}}};
  return registry;
}

}  // namespace bwsim
