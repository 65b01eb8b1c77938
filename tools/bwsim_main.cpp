// The bwsim command line: list kernels, run one, print the summary (and JSON), write a trace.
// Exit codes: 0 success; 1 the result check failed; 2 bad input (flags, config, kernel
// parameters, launch); 3 the simulation detected a misuse (incl. an async race); 4 internal
// error; 5 deadlock; 6 the watchdog expired (livelock or a run longer than --watchdog).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernel/StallReport.hpp"

namespace {

constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitSimError = 3;
constexpr int kExitInternal = 4;
constexpr int kExitDeadlock = 5;
constexpr int kExitWatchdog = 6;

struct RunFlags {
  std::string config = BWSIM_SOURCE_DIR "/sim_configs/b200.yaml";
  std::vector<std::string> overrides;
  bool functional = false;
  bool check = false;
  bool json = false;
  std::string trace;
  std::uint32_t trace_sms = 4;
  std::uint64_t watchdog = 10'000'000'000ull;
  bool no_check_races = false;
  std::string stats;  // --stats FILE: stall analysis as JSON
  std::map<std::string, std::map<std::string, std::string>> params;  // per kernel: flag -> value
};

std::string human_bytes(double b) {
  if (b >= 1 << 30) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.2f} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{:.0f} B", b);
}

nlohmann::json summary_json(const bwsim::KernelReport& r, const bwsim::HardwareConfig& cfg, const RunFlags& f) {
  const auto& run = r.run;
  nlohmann::json j;
  j["kernel"] = r.kernel;
  j["problem"] = r.problem;
  j["config"] = cfg.name;
  j["mode"] = f.functional ? "functional" : "timing";
  j["cycles"] = run.cycles;
  j["time_us"] = static_cast<double>(run.cycles) / (cfg.clock_ghz * 1e3);
  j["events"] = run.events;
  j["wall_seconds"] = run.wall_seconds;
  j["events_per_second"] = run.wall_seconds > 0 ? static_cast<double>(run.events) / run.wall_seconds : 0.0;
  j["sms_used"] = run.sms_used;
  j["ctas"] = run.ctas;
  j["tma"] = {{"loads", run.tma.loads},           {"load_bytes", run.tma.load_bytes},
              {"delivered_bytes", run.tma.delivered_bytes},
              {"stores", run.tma.stores},         {"store_bytes", run.tma.store_bytes},
              {"prefetches", run.tma.prefetches}, {"busy_fraction", run.tma_busy_fraction()}};
  j["mma"] = {{"mmas", run.mma.mmas},
              {"flops", run.mma.flops},
              {"busy_fraction", run.mma_busy_fraction()},
              {"copies", run.mma.copies},
              {"copy_bytes", run.mma.copy_bytes}};
  j["bytes_per_cycle"] =
      run.cycles ? static_cast<double>(run.tma.load_bytes + run.tma.store_bytes) / static_cast<double>(run.cycles) : 0.0;
  j["check"] = r.checked ? nlohmann::json{{"passed", r.check_passed}, {"detail", r.check_detail}} : nlohmann::json(nullptr);
  if (!f.trace.empty()) j["trace"] = f.trace;
  for (const auto& [k, v] : r.figures.items()) j[k] = v;
  return j;
}

void print_summary(const bwsim::KernelReport& r, const bwsim::HardwareConfig& cfg, const RunFlags& f) {
  const auto& run = r.run;
  const double us = static_cast<double>(run.cycles) / (cfg.clock_ghz * 1e3);
  fmt::print("kernel    {}\n", r.kernel);
  fmt::print("problem   {}\n", r.problem);
  fmt::print("config    {} ({}), {} mode\n", cfg.name, f.config, f.functional ? "functional" : "timing");
  fmt::print("cycles    {}  ({:.3f} us at {} GHz)\n", run.cycles, us, cfg.clock_ghz);
  fmt::print("simulated {} events in {:.3f} s ({:.2f} M events/s)\n", run.events, run.wall_seconds,
             run.wall_seconds > 0 ? static_cast<double>(run.events) / run.wall_seconds / 1e6 : 0.0);
  const double moved = static_cast<double>(run.tma.load_bytes + run.tma.store_bytes);
  fmt::print("bytes     loaded {} in {} TMA loads, stored {} in {} TMA stores; {:.2f} B/cycle moved\n",
             human_bytes(static_cast<double>(run.tma.load_bytes)), run.tma.loads,
             human_bytes(static_cast<double>(run.tma.store_bytes)), run.tma.stores,
             run.cycles ? moved / static_cast<double>(run.cycles) : 0.0);
  if (run.tma.delivered_bytes != run.tma.load_bytes)
    fmt::print("multicast {} read from L2 landed as {} in SMEM ({:.2f}x)\n",
               human_bytes(static_cast<double>(run.tma.load_bytes)), human_bytes(static_cast<double>(run.tma.delivered_bytes)),
               run.tma.load_bytes ? static_cast<double>(run.tma.delivered_bytes) / static_cast<double>(run.tma.load_bytes) : 0.0);
  fmt::print("units     TMA busy {:.1f}%, tensor pipe busy {:.1f}% (over {} SM{})\n", 100.0 * run.tma_busy_fraction(),
             100.0 * run.mma_busy_fraction(), run.sms_used, run.sms_used == 1 ? "" : "s");
  if (run.mma.mmas)
    fmt::print("mma       {} tcgen05.mma, {:.1f} TFLOP/s at {} GHz\n", run.mma.mmas,
               run.cycles ? run.mma.flops / (static_cast<double>(run.cycles) / (cfg.clock_ghz * 1e9)) / 1e12 : 0.0,
               cfg.clock_ghz);
  for (const auto& [k, v] : r.figures.items()) {
    if (v.is_number_float())
      fmt::print("  {:<24} {:.4g}\n", k, v.get<double>());
    else
      fmt::print("  {:<24} {}\n", k, v.dump());
  }
  fmt::print("\n{}\n", bwsim::stall_table(run, cfg.clock_ghz));
  if (r.checked) fmt::print("check     {}: {}\n", r.check_passed ? "PASSED" : "FAILED", r.check_detail);
  if (!f.trace.empty())
    fmt::print("trace     {} (SMs 0-{}; open in ui.perfetto.dev; 1 us on its axis = 1 cycle)\n", f.trace,
               std::min(f.trace_sms, run.sms_used) - 1);
}

int run_kernel(const bwsim::KernelInfo& k, RunFlags& f) {
  if (f.check && !f.functional) throw bwsim::InputError("--check needs --functional (timing mode moves no data)");
  if (f.trace_sms == 0) throw bwsim::InputError("--trace-sms must be at least 1");
  const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);
  bwsim::KernelRequest req{cfg, {}, {}, f.check};
  req.options.mode = f.functional ? bwsim::Mode::Functional : bwsim::Mode::Timing;
  req.options.trace_path = f.trace;
  req.options.trace_sms = f.trace_sms;
  req.options.watchdog_cycles = f.watchdog;
  req.options.check_races = !f.no_check_races;
  for (const auto& [name, value] : f.params.at(k.name)) req.args.set(name, value);
  const bwsim::KernelReport r = k.run(req);
  if (!f.stats.empty()) {
    std::ofstream out(f.stats);
    if (!out) throw bwsim::InputError(fmt::format("--stats {}: cannot write the file", f.stats));
    nlohmann::json j = bwsim::stall_json(r.run);
    j["summary"] = summary_json(r, cfg, f);
    out << j.dump(1) << "\n";
  }
  if (f.json)
    fmt::print("{}\n", summary_json(r, cfg, f).dump());
  else
    print_summary(r, cfg, f);
  return r.checked && !r.check_passed ? kExitCheckFailed : 0;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{"bwsim: a cycle-approximate simulator of the NVIDIA Blackwell (SM100) SM"};
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "list the kernels and their parameters");
  auto* run = app.add_subcommand("run", "simulate a kernel: bwsim run KERNEL [parameters] [options]");
  run->require_subcommand(1);

  RunFlags flags;
  const bwsim::KernelInfo* chosen = nullptr;
  for (const auto& k : bwsim::kernel_registry()) {
    auto* sub = run->add_subcommand(k.name, k.summary);
    for (const auto& p : k.params) {
      std::string& value = flags.params[k.name][p.name];
      value = p.default_value;
      sub->add_option("--" + p.name, value, p.help)->capture_default_str();
    }
    sub->add_option("--config", flags.config, "hardware config YAML")->capture_default_str();
    sub->add_option("--set", flags.overrides, "override a config value: key.path=value (repeatable)");
    sub->add_flag("--functional", flags.functional, "move real bytes and compute real values (default: timing mode)");
    sub->add_flag("--check", flags.check, "compare the result with the CPU reference (needs --functional)");
    sub->add_option("--trace", flags.trace, "write a Chrome/Perfetto trace-event JSON file");
    sub->add_option("--trace-sms", flags.trace_sms, "trace only SMs 0 .. N-1")->capture_default_str();
    sub->add_flag("--json", flags.json, "print the summary as one JSON object");
    sub->add_option("--stats", flags.stats, "write the stall analysis (per role and per warp) as JSON to FILE");
    sub->add_flag("--no-check-races", flags.no_check_races,
                  "skip async race detection (TMA/MMA/tcgen05.ld ordering, proxy fences) for speed");
    sub->add_option("--watchdog", flags.watchdog, "simulated-cycle limit before a run is reported as a livelock")
        ->capture_default_str();
    sub->callback([&chosen, &k] { chosen = &k; });
  }

  // A clearer message than CLI11's for the most common mistake.
  if (argc >= 3 && std::string(argv[1]) == "run" && argv[2][0] != '-' && !bwsim::find_kernel(argv[2])) {
    fmt::print(stderr, "bwsim: unknown kernel '{}'; `bwsim list` shows the kernels\n", argv[2]);
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }

  try {
    if (list->parsed()) {
      for (const auto& k : bwsim::kernel_registry()) {
        fmt::print("{}\n  {}\n", k.name, k.summary);
        for (const auto& p : k.params) fmt::print("    --{:<16} {} (default {})\n", p.name, p.help, p.default_value);
      }
      return 0;
    }
    return run_kernel(*chosen, flags);
  } catch (const bwsim::InputError& e) {
    fmt::print(stderr, "bwsim: {}\n", e.what());
    return kExitBadInput;
  } catch (const bwsim::SimError& e) {
    fmt::print(stderr, "bwsim: simulation stopped\n{}\n", e.what());
    if (dynamic_cast<const bwsim::DeadlockError*>(&e)) return kExitDeadlock;
    if (dynamic_cast<const bwsim::WatchdogError*>(&e)) return kExitWatchdog;
    return kExitSimError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bwsim: internal error: {}\n", e.what());
    return kExitInternal;
  }
}
