#include "bwsim/cli/KernelRun.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "bwsim/check/RaceCheckThread.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/core/HostCores.hpp"
#include "bwsim/kernel/ModelChoices.hpp"
#include "bwsim/kernel/StallReport.hpp"
#include "bwsim/power/PowerReport.hpp"
#include "bwsim/report/HtmlReport.hpp"
#include "bwsim/report/StatsOutput.hpp"

namespace bwsim {

std::string default_config(const char* name) {
  if (const char* dir = std::getenv("BWSIM_CONFIG_DIR")) return (std::filesystem::path(dir) / name).string();
  for (const char* dir : {BWSIM_SOURCE_CONFIG_DIR, BWSIM_INSTALLED_CONFIG_DIR})
    if (std::filesystem::exists(std::filesystem::path(dir) / name)) return (std::filesystem::path(dir) / name).string();
  return (std::filesystem::path(BWSIM_INSTALLED_CONFIG_DIR) / name).string();
}

KernelRequest make_request(const KernelInfo& k, const HardwareConfig& cfg, const RunFlags& f) {
  if (f.check && !f.functional) throw InputError("--check needs --functional (timing mode moves no data)");
  if (f.trace_sms == 0) throw InputError("--trace-sms must be at least 1");
  KernelRequest req{cfg, {}, {}, f.check};
  req.options.mode = f.functional ? Mode::Functional : Mode::Timing;
  req.options.trace_path = f.trace;
  req.options.trace_sms = f.trace_sms;
  if (!f.trace_kinds.empty()) req.options.trace_filter.kinds = parse_trace_kinds(f.trace_kinds);
  if (!f.trace_window.empty()) {
    unsigned long long b = 0, e = 0;
    char colon = 0;
    if (std::sscanf(f.trace_window.c_str(), "%llu%c%llu", &b, &colon, &e) != 3 || colon != ':' || e < b)
      throw InputError(fmt::format("--trace-window: expected START:END cycles with START <= END, got '{}'",
                                          f.trace_window));
    req.options.trace_filter.window_begin = b;
    req.options.trace_filter.window_end = e;
  }
  req.options.watchdog_cycles = f.watchdog;
  req.options.check_races = !f.no_check_races;
  req.options.cross_sm_census = f.cross_sm;
  if (cfg.power.limit_w > 0 && f.power_window_us > 0)
    req.options.snapshot_cycles = std::max<Cycle>(1, static_cast<Cycle>(f.power_window_us * cfg.clock_ghz * 1e3));
  if (f.progress)
    req.options.progress = [](const Progress& p) {
      fmt::print(stderr, "\r  cycle {:>12}  {:>8.2f} M events  {}/{} CTAs done  {} MMAs ", p.cycle, p.events / 1e6,
                 p.ctas_done, p.ctas, p.mmas);
      std::fflush(stderr);
    };
  for (const auto& [name, value] : f.params.at(k.name)) req.args.set(name, value);
  return req;
}

nlohmann::json run_metadata(const KernelReport& r, const HardwareConfig& cfg, const RunFlags& f,
                            const nlohmann::json& power) {
  nlohmann::json j;
  j["kernel"] = r.kernel;
  j["problem"] = r.problem;
  j["config"] = cfg.name;
  j["mode"] = f.functional ? "functional" : "timing";
  j["check"] = r.checked ? nlohmann::json{{"passed", r.check_passed}, {"detail", r.check_detail}} : nlohmann::json(nullptr);
  if (!f.trace.empty()) j["trace"] = f.trace;
  if (!power.is_null()) j["power"] = power;
  if (r.run.cross_sm) j["cross_sm"] = cross_sm_json(*r.run.cross_sm, r.run.events);
  return j;
}

nlohmann::json cross_sm_json(const CrossSmCensus& c, std::uint64_t events) {
  const auto share = [&](std::uint64_t n) { return events ? static_cast<double>(n) / static_cast<double>(events) : 0.0; };
  nlohmann::json j{{"events", events}, {"coupled_events", c.coupled_events}, {"single_sm_share", 1.0 - share(c.coupled_events)}};
  for (std::size_t k = 0; k < c.kinds.size(); ++k) {
    const CouplingCount& n = c.kinds[k];
    nlohmann::json lead = nlohmann::json::object();  // "<2^i": operations with lead below 2^i (and not below 2^(i-1))
    for (std::size_t b = 0; b < n.lead_log2.size(); ++b)
      if (n.lead_log2[b]) lead[b == 0 ? "0" : fmt::format("<{}", std::uint64_t{1} << b)] = n.lead_log2[b];
    j["kinds"][kCouplingNames[k]] = {{"operations", n.operations},
                                     {"events", n.events},
                                     {"event_share", share(n.events)},
                                     {"min_lead", n.operations ? nlohmann::json(n.min_lead) : nlohmann::json(nullptr)},
                                     {"lead_histogram", lead}};
  }
  return j;
}

namespace {

// --json: the metadata, every declared statistic and the kernel's own figures, in one object.
nlohmann::json summary_json(const KernelReport& r, const std::vector<StatSample>& stats,
                            const HardwareConfig& cfg, const RunFlags& f, const nlohmann::json& power) {
  nlohmann::json j = run_metadata(r, cfg, f, power);
  j.update(stats_json(stats));
  for (const auto& [k, v] : r.figures.items()) j[k] = v;
  return j;
}

// The kernel's run, its race checks on a second thread where the process has a second core; where
// they found a race there, run again with them inline, which raises it as a located error
// (check/RaceCheckThread).
KernelReport run_checked(const KernelInfo& k, KernelRequest& req, bool inline_checks) {
  if (!req.options.check_races || inline_checks || usable_cores() < 2) return k.run(req);
  req.options.race_check_thread = true;
  try {
    return k.run(req);
  } catch (const RaceCheckDeferred&) {
    req.options.race_check_thread = false;
    return k.run(req);
  }
}

}  // namespace

KernelRun run_kernel(const KernelInfo& k, const HardwareConfig& cfg, RunFlags& f) {
  model_choices(cfg);  // an unknown model name fails before the run, not after it
  // A report is drawn from a trace: the user's, or one written next to the report.
  const bool own_trace = !f.report.empty() && f.trace.empty();
  if (own_trace) f.trace = f.report + ".trace.json";
  KernelRequest req = make_request(k, cfg, f);
  // The report's own trace covers the whole run (its plots); --trace-window picks the timeline.
  if (own_trace) req.options.trace_filter.window_begin = 0, req.options.trace_filter.window_end = ~Cycle{0};
  const KernelReport r = run_checked(k, req, f.inline_race_checks);
  const std::vector<StatSample> stats = stat_registry().sample(r.run);
  const nlohmann::json power = power_json(r.run, cfg, f.sustained);
  if (!f.report.empty()) {
    nlohmann::json summary = run_metadata(r, cfg, f, power);
    if (own_trace) summary.erase("trace");
    for (const auto& [key, v] : r.figures.items()) summary[key] = v;
    ReportInput in{f.trace, summary, stats, stall_table(r.run), r.run.cycles};
    unsigned long long b = 0, e = 0;
    char colon = 0;
    const bool window = std::sscanf(f.trace_window.c_str(), "%llu%c%llu", &b, &colon, &e) == 3;
    in.window_begin = window ? b : 0;
    in.window_end = window ? std::min<Cycle>(e, r.run.cycles) : std::min<Cycle>(r.run.cycles, 40000);
    write_html_report(f.report, in);
    if (own_trace) {
      std::remove(f.trace.c_str());
      f.trace.clear();
    }
  }
  KernelRun out{r, stats, power, summary_json(r, stats, cfg, f, power), nullptr};
  if (f.keep_stalls || !f.stats.empty()) {
    out.stalls = stall_json(r.run);
    out.stalls["summary"] = out.summary;
    out.stalls["per_sm"] = per_sm_json(stats);
  }
  if (!f.stats.empty()) {
    std::ofstream file(f.stats);
    if (!file) throw InputError(fmt::format("--stats {}: cannot write the file", f.stats));
    file << out.stalls.dump(1) << "\n";
  }
  return out;
}

}  // namespace bwsim
