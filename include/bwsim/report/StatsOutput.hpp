#pragma once
// The run's statistics as each output shows them, all rendered from the declarations
// (kernel/StatRegistry): nothing here names a statistic.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bwsim/core/Stats.hpp"
#include "bwsim/kernel/StatRegistry.hpp"

namespace bwsim {

// {"<stat>": v, "<group>": {"<stat>": v, ...}, ...}: one key per statistic, nested at the dot.
nlohmann::json stats_json(const std::vector<StatSample>& samples);
// The per-SM values the same way, as arrays indexed by SM.
nlohmann::json per_sm_json(const std::vector<StatSample>& samples);
// One line per group ("<group>   <stat> <value>, ..."), wrapped; a group whose
// values are all zero (the wgmma pipes of a Blackwell run) is left out.
std::string stats_summary(const std::vector<StatSample>& samples);
// docs/stats.md: every statistic's name, unit, kind and description (`bwsim stats-table`).
std::string stats_markdown(const StatRegistry& registry);

}  // namespace bwsim
