#include "bwsim/kernel/StallReport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "bwsim/kernel/StatRegistry.hpp"

namespace bwsim {
namespace {
constexpr std::size_t kActivities = static_cast<std::size_t>(Activity::kCount);

std::string role_of(const WarpSummary& w) { return w.role.empty() ? fmt::format("w{}", w.warp) : w.role; }

// "mainloop.empty[2]" -> "mainloop.empty[*]": a role's waits summed over a pipeline's stages.
std::string stage_pattern(const std::string& name) {
  const auto open = name.rfind('[');
  if (open == std::string::npos || name.back() != ']') return name;
  return name.substr(0, open) + "[*]";
}

void add_wait(std::vector<std::pair<std::string, Cycle>>& into, const std::string& name, Cycle c) {
  auto it = std::find_if(into.begin(), into.end(), [&](const auto& e) { return e.first == name; });
  if (it == into.end()) into.emplace_back(name, c);
  else it->second += c;
}
}  // namespace

std::vector<RoleStalls> stalls_by_role(const RunResult& run) {
  std::vector<RoleStalls> roles;
  for (const WarpSummary& w : run.warps) {
    const std::string role = role_of(w);
    auto it = std::find_if(roles.begin(), roles.end(), [&](const RoleStalls& r) { return r.role == role; });
    if (it == roles.end()) it = roles.insert(roles.end(), RoleStalls{role});
    ++it->warps;
    it->lifetime += w.finish - w.start;
    for (std::size_t a = 0; a < kActivities; ++a) it->activity[a] += w.activity[a];
    for (const auto& [name, c] : w.barrier_wait) add_wait(it->barrier_wait, stage_pattern(name), c);
  }
  for (RoleStalls& r : roles)
    std::sort(r.barrier_wait.begin(), r.barrier_wait.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return roles;
}

std::string stall_table(const RunResult& run) {
  const double clock_ghz = run.clock_ghz;
  const std::vector<RoleStalls> roles = stalls_by_role(run);
  std::array<bool, kActivities> used{};
  for (const RoleStalls& r : roles)
    for (std::size_t a = 0; a < kActivities; ++a) used[a] = used[a] || r.activity[a] > 0;
  std::string out = fmt::format("{:<28} {:>5}", "warps (share of their time)", "n");
  for (std::size_t a = 0; a < kActivities; ++a)
    if (used[a]) out += fmt::format(" {:>9}", activity_name(static_cast<Activity>(a)));
  out += "  most waited-on barrier\n";
  const RoleStalls* most_blocked = nullptr;
  Cycle most_blocked_cycles = 0;
  for (const RoleStalls& r : roles) {
    out += fmt::format("{:<28} {:>5}", r.role.substr(0, 28), r.warps);
    for (std::size_t a = 0; a < kActivities; ++a)
      if (used[a])
        out += fmt::format(" {:>8.1f}%", r.lifetime ? 100.0 * static_cast<double>(r.activity[a]) / r.lifetime : 0.0);
    if (!r.barrier_wait.empty()) {
      const auto& [name, c] = r.barrier_wait.front();
      out += fmt::format("  {} ({:.2f} us per warp)", name, static_cast<double>(c) / r.warps / (clock_ghz * 1e3));
      if (c / r.warps > most_blocked_cycles) {
        most_blocked_cycles = c / r.warps;
        most_blocked = &r;
      }
    }
    out += "\n";
  }
  // The units' busy fractions; the memory links' too when one is busy most of the run, and a link
  // busy over 90% of it is the limit the warps' barrier waits are queueing behind.
  const std::vector<StatSample> busy = critical_path(run);
  const StatSample* busiest_link = nullptr;
  for (const StatSample& s : busy)
    if (s.info->critical.bound && (!busiest_link || as_double(s.value) > as_double(busiest_link->value))) busiest_link = &s;
  const bool show_links = busiest_link && as_double(busiest_link->value) > 0.5;
  std::string line;
  for (const bool links : {false, true})  // the units first, then the links
    for (const StatSample& s : busy)
      if ((s.info->critical.bound != nullptr) == links && (!links || show_links))
        line += fmt::format("{}{} busy {:.1f}%", line.empty() ? "" : ", ", s.info->critical.label,
                            100.0 * as_double(s.value));
  out += "critical  " + line;
  if (show_links && as_double(busiest_link->value) > 0.9) out += fmt::format(" ({}-bound)", busiest_link->info->critical.bound);
  if (most_blocked)
    out += fmt::format("; {} waited {:.2f} us per warp on {}", most_blocked->role,
                       static_cast<double>(most_blocked_cycles) / (clock_ghz * 1e3), most_blocked->barrier_wait.front().first);
  return out + "\n";
}

nlohmann::json stall_json(const RunResult& run) {
  auto activities = [](const std::array<Cycle, kActivities>& a) {
    nlohmann::json j = nlohmann::json::object();
    for (std::size_t i = 0; i < kActivities; ++i) j[activity_name(static_cast<Activity>(i))] = a[i];
    return j;
  };
  auto waits = [](const std::vector<std::pair<std::string, Cycle>>& w) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, c] : w) j[name] = c;
    return j;
  };
  nlohmann::json j;
  j["roles"] = nlohmann::json::array();
  for (const RoleStalls& r : stalls_by_role(run))
    j["roles"].push_back({{"role", r.role},
                          {"warps", r.warps},
                          {"cycles", r.lifetime},
                          {"activity", activities(r.activity)},
                          {"barrier_wait", waits(r.barrier_wait)}});
  j["warps"] = nlohmann::json::array();
  for (const WarpSummary& w : run.warps)
    j["warps"].push_back({{"sm", w.sm},
                          {"cta", w.cta},
                          {"warp", w.warp},
                          {"role", role_of(w)},
                          {"start", w.start},
                          {"finish", w.finish},
                          {"instructions", w.instructions},
                          {"activity", activities(w.activity)},
                          {"barrier_wait", waits(w.barrier_wait)}});
  return j;
}

}  // namespace bwsim
