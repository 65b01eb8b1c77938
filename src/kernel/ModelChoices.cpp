#include "bwsim/kernel/ModelChoices.hpp"

#include "bwsim/hw/memory/HbmModel.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"
#include "bwsim/power/ClockController.hpp"

namespace bwsim {

std::vector<ModelChoice> model_choices(const HardwareConfig& config) {
  l2_policies().at(config.l2.policy, config.source);
  hbm_models().at(config.hbm.model, config.source);
  std::vector<ModelChoice> choices{{l2_policies().setting(), l2_policies().names()},
                                   {hbm_models().setting(), hbm_models().names()}};
  if (config.power.limit_w > 0) {  // a config with a power section
    clock_controllers().at(config.power.clock_controller, config.source);
    choices.push_back({clock_controllers().setting(), clock_controllers().names()});
  }
  return choices;
}

}  // namespace bwsim
