#pragma once
// Where the time went: the warps' activity cycles (WarpSummary) grouped by role, as a table for
// the terminal and as JSON for `--stats FILE`.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {

struct RoleStalls {
  std::string role;  // the kernel's name for the warps ("w3" when unnamed)
  std::uint32_t warps = 0;
  Cycle lifetime = 0;  // sum of the warps' finish - start
  std::array<Cycle, static_cast<std::size_t>(Activity::kCount)> activity{};
  std::vector<std::pair<std::string, Cycle>> barrier_wait;  // summed over stages ("full[*]"), largest first
};

std::vector<RoleStalls> stalls_by_role(const RunResult& run);

// One line per role with the share of its warps' time per activity, and the barrier it waited
// on most; then the critical-path line (kernel/StatRegistry's critical_path).
std::string stall_table(const RunResult& run);

// {"roles": [...], "warps": [...]}: every warp's activity cycles and per-barrier waits.
nlohmann::json stall_json(const RunResult& run);

}  // namespace bwsim
