#include "bwsim/hw/memory/ModelChoices.hpp"

#include "bwsim/hw/memory/HbmModel.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"

namespace bwsim {

std::vector<ModelChoice> model_choices(const HardwareConfig& config) {
  l2_policies().at(config.l2.policy, config.source);
  hbm_models().at(config.hbm.model, config.source);
  return {{l2_policies().setting(), l2_policies().names()}, {hbm_models().setting(), hbm_models().names()}};
}

}  // namespace bwsim
