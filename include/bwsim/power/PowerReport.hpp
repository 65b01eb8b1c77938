#pragma once
// The power model's figures for a finished run, as the CLI prints them (JSON and text).
#include <nlohmann/json.hpp>
#include <string>

#include "bwsim/config/HardwareConfig.hpp"

namespace bwsim {

struct RunResult;

// {"clock_ghz", "power_w", "time_us", "energy_mj"} of one launch at the clock it starts at, and with
// `sustained_seconds` > 0 also "sustained": the kernel back to back for that wall time (steady
// clock, power, time per kernel, peak power, time at the start clock and under the limit, and the
// clock trace every 100 ms). Null when the config has no power model.
nlohmann::json power_json(const RunResult& run, const HardwareConfig& config, double sustained_seconds);
// The same as lines of the human summary (empty without a power model).
std::string power_text(const nlohmann::json& power);

}  // namespace bwsim
