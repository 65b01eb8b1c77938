#pragma once
// The config keys that choose a model by name (l2.policy, hbm.model, power.clock_controller), for
// `bwsim describe-config`; the units that use them build them (MemorySystem, power/sustain).
#include <string>
#include <string_view>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"

namespace bwsim {

struct ModelChoice {
  std::string_view setting;  // "l2.policy"
  std::string names;         // the valid ones: "lru, clock"
};

// Every model choice; throws ConfigError naming the key and the valid names if `config` chooses a
// model that does not exist.
std::vector<ModelChoice> model_choices(const HardwareConfig& config);

}  // namespace bwsim
