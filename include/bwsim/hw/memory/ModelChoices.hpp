#pragma once
// The config keys that choose a hardware model by name (l2.policy, hbm.model), for
// `bwsim describe-config`; the memory system builds the chosen models (MemorySystem).
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
