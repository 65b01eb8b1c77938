// The bwsim command line: list kernels, run one, print the summary (and JSON), write a trace
// (cli_main; the exit codes are in Cli.hpp).
#include "bwsim/cli/Cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <functional>
#include <sstream>
#include <yaml-cpp/yaml.h>
#include <iostream>
#include <map>

#include "bwsim/check/Perturbation.hpp"
#include "bwsim/cli/KernelRun.hpp"
#include "bwsim/cli/Sweep.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/ModelChoices.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernel/StallReport.hpp"
#include "bwsim/power/PowerReport.hpp"
#include "bwsim/kernels/GemmSm90Compare.hpp"
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/report/Fidelity.hpp"
#include "bwsim/report/StatsOutput.hpp"

namespace {

using bwsim::RunFlags;
using bwsim::make_request;

constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitSimError = 3;
constexpr int kExitInternal = 4;
constexpr int kExitDeadlock = 5;
constexpr int kExitWatchdog = 6;

void print_summary(const bwsim::KernelReport& r, const std::vector<bwsim::StatSample>& stats,
                   const bwsim::HardwareConfig& cfg, const RunFlags& f, const nlohmann::json& power) {
  const auto& run = r.run;
  fmt::print("kernel    {}\n", r.kernel);
  fmt::print("problem   {}\n", r.problem);
  fmt::print("config    {} ({}), {} mode\n", cfg.name, f.config, f.functional ? "functional" : "timing");
  fmt::print("{}", bwsim::stats_summary(stats));
  for (const auto& [k, v] : r.figures.items()) {
    if (v.is_number_float())
      fmt::print("  {:<24} {:.4g}\n", k, v.get<double>());
    else
      fmt::print("  {:<24} {}\n", k, v.dump());
  }
  fmt::print("{}", bwsim::power_text(power));
  if (run.cross_sm) {
    const nlohmann::json c = bwsim::cross_sm_json(*run.cross_sm, run.events);
    fmt::print("cross-SM  {:.1f}% of {} events touch one SM only; per coupling: operations, events, least lead\n",
               100 * c["single_sm_share"].get<double>(), run.events);
    for (const auto& [name, k] : c["kinds"].items())
      fmt::print("  {:<24} {:>10} {:>10} {:>8}\n", name, k["operations"].get<std::uint64_t>(), k["events"].get<std::uint64_t>(),
                 k["min_lead"].dump());
  }
  fmt::print("\n{}\n", bwsim::stall_table(run));
  if (r.checked) fmt::print("check     {}: {}\n", r.check_passed ? "PASSED" : "FAILED", r.check_detail);
  if (!f.report.empty()) fmt::print("report    {} (a self-contained HTML page)\n", f.report);
  if (!f.trace.empty())
    fmt::print("trace     {} (SMs {}, the first to get CTAs; open in ui.perfetto.dev; 1 us on its axis = 1 cycle)\n",
               f.trace, fmt::join(run.traced_sms, ", "));
}

// bwsim run --perturb SEED[:N]: the kernel under N perturbed schedules; exit 1 if any failed.
int run_perturbed(const bwsim::KernelInfo& k, RunFlags& f) {
  const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);
  bwsim::KernelRequest req = make_request(k, cfg, f);
  req.options.snapshot_cycles = 0;  // no power windows: only the outcome counts here
  const bwsim::Perturbation p{f.perturb_band, f.perturb_skew};
  if (!(p.latency_band >= 0 && p.latency_band < 1)) throw bwsim::InputError("--perturb-band: expected 0 <= band < 1");
  const auto runs = bwsim::run_perturbed(k, f.config, f.overrides, req, bwsim::parse_perturb_seeds(f.perturb), p);
  const bool failed = std::any_of(runs.begin(), runs.end(), [](const auto& r) { return !r.ok; });
  if (f.json) {
    nlohmann::json j{{"kernel", k.name}, {"config", cfg.name}, {"latency_band", p.latency_band}, {"sm_skew", p.sm_skew}};
    for (const auto& r : runs)
      j["runs"].push_back({{"seed", r.seed}, {"ok", r.ok}, {"outcome", r.outcome}, {"detail", r.detail}, {"cycles", r.cycles},
                          {"hbm_read_bytes", r.hbm_read_bytes}});
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("kernel    {}\nconfig    {} ({})\n{}", k.name, cfg.name, f.config, bwsim::perturbed_runs_text(runs, p));
  }
  return failed ? kExitCheckFailed : 0;
}

int run_and_print(const bwsim::KernelInfo& k, RunFlags& f) {
  if (!f.perturb.empty()) return run_perturbed(k, f);
  const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);
  const bwsim::KernelRun r = bwsim::run_kernel(k, cfg, f);
  if (f.progress) fmt::print(stderr, "\r{:80}\r", "");  // clear the progress line
  if (f.json)
    fmt::print("{}\n", r.summary.dump());
  else
    print_summary(r.report, r.stats, cfg, f, r.power);
  return r.report.checked && !r.report.check_passed ? kExitCheckFailed : 0;
}

// The sweep's own command line for --emit-slurm's tasks: this executable by its absolute path,
// then the arguments less the options that choose what the emitting run does.
std::vector<std::string> sweep_command(int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::canonical("/proc/self/exe", ec);
  std::vector<std::string> command{ec ? std::string(argv[0]) : exe.string()};
  static constexpr std::string_view kOwn[] = {"--emit-slurm", "--shards", "--shard", "--csv", "--jobs", "-j"};
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto own = std::find_if(std::begin(kOwn), std::end(kOwn), [&](std::string_view o) {
      return a == o || (a.starts_with(o) && a.size() > o.size() && a[o.size()] == '=');
    });
    if (own == std::end(kOwn)) {
      command.emplace_back(a);
    } else if (a == *own) {
      ++i;  // its value
    }
  }
  return command;
}

// bwsim fidelity: the kernel run with each uncertain config value at its low and high end.
int fidelity_kernel(const bwsim::KernelInfo& k, RunFlags& f) {
  const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);
  bwsim::KernelRequest req = make_request(k, cfg, f);
  req.options.progress = nullptr;
  req.options.snapshot_cycles = 0;  // only the cycles count here: no power windows
  const bwsim::FidelityReport r = bwsim::fidelity(k, f.config, f.overrides, req.options, req.args, f.fidelity_values);
  if (f.json) {
    nlohmann::json j{{"kernel", k.name},
                     {"config", cfg.name},
                     {"cycles", r.base_cycles},
                     {"uncertainty", r.uncertainty},
                     {"borrowed_or_estimated_share", r.borrowed_or_estimated_share}};
    for (const bwsim::Sensitivity& s : r.rows)
      j["values"].push_back({{"key", s.key}, {"tag", s.tag}, {"band", s.band}, {"value", s.value}, {"low", s.low},
                             {"high", s.high}, {"low_cycles", s.low_cycles}, {"high_cycles", s.high_cycles},
                             {"low_change", s.low_change}, {"high_change", s.high_change}});
    fmt::print("{}\n", j.dump());
    return 0;
  }
  fmt::print("kernel    {}\nconfig    {} ({}); each listed value set to its low and high end (cycles' change)\n\n{}",
             k.name, cfg.name, f.config, bwsim::fidelity_text(r));
  return 0;
}

// A GEMM twin CSV: every kernel row against gemm_sm90 at the row's clock; exit 1 if any row is
// outside its tolerance (10% unless the tolerance file widens it) or the mean absolute error
// exceeds the 5% target.
int compare_kernels(const RunFlags& f, const bwsim::HardwareConfig& cfg) {
  const auto rows = bwsim::compare_gemm_sm90_with_hardware(cfg, f.measured_csv, f.tolerances);
  // The busy fractions of each row's critical-path line, one column each.
  std::string busy_header;
  if (!rows.empty())
    for (const bwsim::StatSample& s : rows.front().busy) busy_header += fmt::format(" {:>11}", s.info->critical.label);
  fmt::print("{:<16} {:<52} {:>6} {:>10} {:>10} {:>8} {}  {:>4}\n", "shape", "variant", "MHz", "measured", "predicted",
             "error", busy_header, "tol");
  int outside = 0, within_target = 0;
  for (const auto& r : rows) {
    outside += r.within() ? 0 : 1;
    within_target += std::fabs(r.error) <= 0.10 ? 1 : 0;
    std::string busy;
    for (const bwsim::StatSample& s : r.busy) busy += fmt::format(" {:>10.0f}%", 100.0 * bwsim::as_double(s.value));
    const std::string draws =
        r.draws > 1 ? fmt::format("  upper median of {} draws, {} to {}", r.draws, r.predicted_low, r.predicted_high) : "";
    fmt::print("{:<16} {:<52} {:>6.0f} {:>10} {:>10} {:>+7.1f}% {}  {:>3.0f}% {}{}{}\n", r.shape, r.variant, r.clock_mhz,
               r.measured, r.predicted, 100.0 * r.error, busy, 100.0 * r.tolerance, r.within() ? "ok" : "OUTSIDE", draws,
               r.reason.empty() ? "" : "  (" + r.reason + ")");
  }
  const double mae = bwsim::mean_absolute_error(rows);
  fmt::print("{} of {} rows within tolerance, {} within the 10% target; mean absolute error {:.1f}% (target 5%) ({} "
             "config vs {})\n",
             rows.size() - outside, rows.size(), within_target, 100.0 * mae, cfg.name, f.measured_csv);
  return outside || mae > 0.05 ? kExitCheckFailed : 0;
}

// bwsim compare CSV: every measured row against its simulated scenario (a ubench CSV) or kernel
// run (a gemm_sm90 CSV); exit 1 if any row is outside its tolerance.
int compare_hardware(const RunFlags& f) {
  const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);
  if (bwsim::is_gemm_sm90_csv(f.measured_csv)) return compare_kernels(f, cfg);
  const auto rows = bwsim::compare_with_hardware(cfg, f.measured_csv, f.tolerances);
  fmt::print("{:<44} {:>7} {:>10} {:>10} {:>8} {:>6}  {}\n", "scenario", "param", "measured", "predicted", "error",
             "tol", "");
  int outside = 0;
  for (const auto& r : rows) {
    outside += r.within() ? 0 : 1;
    fmt::print("{:<44} {:>7} {:>10} {:>10} {:>+7.1f}% {:>5.0f}%  {}{}\n", r.scenario, r.param, r.measured, r.predicted,
               100.0 * r.error, 100.0 * r.tolerance, r.within() ? "ok" : "OUTSIDE",
               r.reason.empty() ? "" : "  (" + r.reason + ")");
  }
  fmt::print("{} of {} rows within tolerance ({} config vs {})\n", rows.size() - outside, rows.size(), cfg.name,
             f.measured_csv);
  return outside ? kExitCheckFailed : 0;
}

// bwsim describe-config FILE: the validated values, one dotted key per line; a key that chooses a
// model by name also lists the names it accepts.
int describe_config(const RunFlags& f) {
  const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);  // throws ConfigError naming the key
  const std::vector<bwsim::ModelChoice> choices = bwsim::model_choices(cfg);
  const YAML::Node root = YAML::LoadFile(f.config);
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& n, const std::string& path) {
    if (n.IsMap()) {
      for (const auto& kv : n) walk(kv.second, path.empty() ? kv.first.as<std::string>() : path + "." + kv.first.as<std::string>());
      return;
    }
    // A sequence (power.energy_scale) in YAML's flow style.
    YAML::Emitter flow;
    if (n.IsSequence()) flow << YAML::Flow << n;
    std::string value = n.IsSequence() ? flow.c_str() : n.as<std::string>();
    for (const std::string& o : f.overrides)
      // (append, not +: GCC 12's stringop-overflow check misreads the + once inlined by the profile)
      if (o.rfind(path + "=", 0) == 0) value = o.substr(path.size() + 1).append("  (--set)");
    for (const bwsim::ModelChoice& c : choices)
      if (c.setting == path) value += fmt::format("  (models: {})", c.names);
    fmt::print("{:<36} {}\n", path, value);
  };
  walk(root, "");
  return 0;
}

}  // namespace

int bwsim::cli_main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{"bwsim: a cycle-approximate simulator of the NVIDIA Blackwell (SM100) SM"};
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "list the kernels and their parameters");
  auto* run = app.add_subcommand("run", "simulate a kernel: bwsim run KERNEL [parameters] [options]");
  run->require_subcommand(1);

  auto* sweep = app.add_subcommand("sweep", "run a kernel over parameter lists: bwsim sweep KERNEL --param m=1024,2048");
  sweep->require_subcommand(1);
  auto* fidelity = app.add_subcommand("fidelity", "how much a kernel's cycles rest on each uncertain config value: "
                                                  "bwsim fidelity KERNEL [parameters] --config FILE");
  fidelity->require_subcommand(1);
  auto* describe = app.add_subcommand("describe-config", "print a config's validated values, one key per line");
  auto* compare = app.add_subcommand("compare", "simulate the calibration microbenchmarks and compare with a hardware CSV");
  auto* stats_table = app.add_subcommand("stats-table", "print every statistic's name, unit and description "
                                                         "(docs/stats.md)");

  RunFlags flags;
  bwsim::SweepOptions sweep_options;
  std::vector<std::string> merge_files;
  auto* merge = app.add_subcommand("merge-csv", "join a sharded sweep's CSVs: bwsim merge-csv OUT SHARD0 SHARD1 ...");
  merge->add_option("files", merge_files, "the merged CSV, then the shards' CSVs in shard order")->required()->expected(2, -1);
  describe->add_option("config", flags.config, "hardware config YAML")->required();
  describe->add_option("--set", flags.overrides, "override a config value: key.path=value (repeatable)");
  compare->add_option("measured", flags.measured_csv, "hardware CSV (scenario,param,cycles), e.g. "
                                                      "tools/calibration/h100_measured.csv")
      ->required();
  compare->add_option("--config", flags.config, "hardware config YAML")->required();
  compare->add_option("--tolerances", flags.tolerances, "CSV scenario,param,tolerance,reason widening the 10% default");
  compare->add_option("--set", flags.overrides, "override a config value: key.path=value (repeatable)");
  const bwsim::KernelInfo* chosen = nullptr;
  for (const auto& k : bwsim::kernel_registry()) flags.params[k.name];
  for (auto* parent : {run, sweep, fidelity})
  for (const auto& k : bwsim::kernel_registry()) {
    auto* sub = parent->add_subcommand(k.name, k.summary);
    for (const auto& p : k.params) {
      std::string& value = flags.params[k.name][p.name];
      value = p.default_value;
      if (p.flag)  // given alone it takes no value (KernelArgs::flag reads the empty one as 1)
        sub->add_option("--" + p.name, value, p.help + " (default " + p.default_value + ")")
            ->expected(0, 1)
            ->type_name("0|1");
      else
        sub->add_option("--" + p.name, value, p.help)->capture_default_str();
    }
    if (parent == run) {
      sub->add_option("--perturb", flags.perturb,
                      "SEED[:N]: run under N perturbed schedules (latencies scaled within --perturb-band, events "
                      "of one cycle in drawn order, SM starts skewed), reporting each run that misuses, deadlocks "
                      "or changes the checked result, with its seed");
      sub->add_option("--perturb-band", flags.perturb_band, "latencies scaled by a factor in [1 - band, 1 + band]")
          ->capture_default_str();
      sub->add_option("--perturb-skew", flags.perturb_skew, "each SM's CTAs start up to this many cycles late")
          ->capture_default_str();
    }
    if (parent == fidelity)
      sub->add_option("--values", flags.fidelity_values,
                      "vary only these listed values (dotted keys, comma-separated); default every listed value")
          ->delimiter(',');
    if (parent == sweep) {
      sub->add_option("--param", flags.sweep_params, "a parameter and its values: NAME=V1,V2,... (repeatable)")
          ->required();
      sub->add_option("--csv", flags.csv, "also write the table as CSV to FILE");
      sub->add_option("-j,--jobs", sweep_options.jobs, "points run at once (threads)")->capture_default_str();
      sub->add_option("--shard", sweep_options.shard, "run only shard I/N of the points (the I-th of N blocks)");
      sub->add_option("--emit-slurm", sweep_options.emit_slurm,
                      "write a Slurm job-array script running the sweep's shards to FILE (needs --csv) instead");
      sub->add_option("--shards", sweep_options.shards, "tasks of --emit-slurm's array (default one per point)");
    }
    sub->add_option("--config", flags.config, "hardware config YAML")->capture_default_str();
    sub->add_option("--set", flags.overrides, "override a config value: key.path=value (repeatable)");
    sub->add_flag("--functional", flags.functional, "move real bytes and compute real values (default: timing mode)");
    sub->add_flag("--check", flags.check, "compare the result with the CPU reference (needs --functional)");
    sub->add_option("--trace", flags.trace, "write a Chrome/Perfetto trace-event JSON file");
    sub->add_option("--trace-sms", flags.trace_sms, "trace only the first N SMs to get CTAs")->capture_default_str();
    sub->add_option("--trace-window", flags.trace_window, "trace only cycles START:END");
    sub->add_option("--trace-kinds", flags.trace_kinds,
                    "trace only these kinds: warps,tma,mma,barriers,flows,counters (default all)");
    sub->add_flag("--json", flags.json, "print the summary as one JSON object");
    sub->add_option("--stats", flags.stats, "write the stall analysis (per role and per warp) as JSON to FILE");
    sub->add_option("--report", flags.report,
                    "write a self-contained HTML report: summary, stalls, SM 0 timeline (--trace-window, default the "
                    "first 40000 cycles), utilisation and bandwidth plots");
    sub->add_flag("--cross-sm", flags.cross_sm,
                "count how the run's events couple the SMs (memory system, CPC load gate, cluster, grid "
                "scheduler) and each coupling's lead in cycles: the figures of docs/parallel-simulation.md");
    sub->add_flag("--no-check-races", flags.no_check_races,
                  "skip async race detection (TMA/MMA/wgmma/tcgen05.ld ordering, proxy fences) and the "
                  "stale-parity check that needs its arrival record, for speed");
    sub->add_flag("--inline-race-checks", flags.inline_race_checks,
                  "run the race checks on the simulation's thread, not on a second one beside it (the result "
                  "and any error are the same; a second thread needs a second core to pay)");
    sub->add_option("--sustained", flags.sustained,
                    "with a config's power model: also model the kernel run back to back for SECONDS of wall "
                    "time (the power limit's steady clock, power and time per kernel); 0: only the start clock")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 3600.0));
    sub->add_option("--power-window-us", flags.power_window_us,
                    "with a config's power model: the windows (microseconds at the config clock) whose power gives "
                    "the run's peak power and power trace; 0: none")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e6));
    sub->add_option("--watchdog", flags.watchdog, "simulated-cycle limit before a run is reported as a livelock")
        ->capture_default_str();
    sub->callback([&chosen, &k] { chosen = &k; });
  }

  // A clearer message than CLI11's for the most common mistake.
  if (argc >= 3 && (std::string(argv[1]) == "run" || std::string(argv[1]) == "sweep" ||
                    std::string(argv[1]) == "fidelity") &&
      argv[2][0] != '-' &&
      !bwsim::find_kernel(argv[2])) {
    fmt::print(stderr, "bwsim: unknown kernel '{}'; `bwsim list` shows the kernels\n", argv[2]);
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }

  // A progress line on a terminal only (quiet when piped or printing JSON).
  flags.progress = !flags.json && isatty(fileno(stderr));
  try {
    if (list->parsed()) {
      for (const auto& k : bwsim::kernel_registry()) {
        fmt::print("{}\n  {}\n", k.name, k.summary);
        for (const auto& p : k.params) fmt::print("    --{:<16} {} (default {})\n", p.name, p.help, p.default_value);
      }
      return 0;
    }
    if (stats_table->parsed()) {
      fmt::print("{}", bwsim::stats_markdown(bwsim::stat_registry()));
      return 0;
    }
    if (describe->parsed()) return describe_config(flags);
    if (compare->parsed()) return compare_hardware(flags);
    if (merge->parsed()) {
      bwsim::merge_sweep_csvs(merge_files.front(), {merge_files.begin() + 1, merge_files.end()});
      return 0;
    }
    if (sweep->parsed()) {
      sweep_options.command = sweep_command(argc, argv);
      return bwsim::sweep_kernel(*chosen, flags, sweep_options);
    }
    if (fidelity->parsed()) return fidelity_kernel(*chosen, flags);
    return run_and_print(*chosen, flags);
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
