#pragma once
// One run of a registered kernel as the command line does it (bwsim run): the request from the
// options, the HTML report, trace and --stats files, and the results as JSON. The command line
// (Cli.cpp) prints them; the Python module returns them.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernel/StatRegistry.hpp"

namespace bwsim {

// A config shipped with bwsim by file name ("b200.yaml"): from $BWSIM_CONFIG_DIR where set, else
// from the source tree bwsim was built from while that is there (a build tree), else from where
// `cmake --install` puts the configs under the prefix configured at build time.
std::string default_config(const char* name);

// The options of bwsim run, sweep, fidelity and compare.
struct RunFlags {
  std::string config = default_config("b200.yaml");
  std::vector<std::string> overrides;
  bool functional = false;
  bool check = false;
  bool json = false;
  std::string trace;
  std::uint32_t trace_sms = 4;
  std::string trace_window;  // START:END cycles
  std::string trace_kinds;
  std::uint64_t watchdog = 10'000'000'000ull;
  bool no_check_races = false;
  // --inline-race-checks: not on a second thread (SimOptions::race_check_thread), which bwsim run
  // uses where the host has two cores or more (sweeps, perturbed and fidelity runs keep them inline).
  bool inline_race_checks = false;
  bool cross_sm = false;  // --cross-sm: how the events coupled the SMs (docs/parallel-simulation.md)
  std::string stats;  // --stats FILE: stall analysis as JSON
  // KernelRun::stalls without --stats too (the Python module returns it; bwsim run does not keep
  // it: attention 1 x 16 x 16384's per-warp object doubled the run's peak memory, and freeing it
  // alone took 5% of a profile of 1 x 16 x 4096).
  bool keep_stalls = false;
  std::vector<std::string> sweep_params;  // bwsim sweep: name=v1,v2,...
  std::string measured_csv, tolerances;   // bwsim compare
  std::vector<std::string> fidelity_values;  // bwsim fidelity --values: only these keys
  std::string csv;
  std::string report;  // --report FILE.html
  // --sustained SECONDS: the power model's back-to-back run (a config with a power section reports
  // the time at the sustained clock by default, not only at the start clock; 0: off).
  double sustained = 10;
  double power_window_us = 10;  // --power-window-us: the power model's windows inside a run
  bool progress = false;        // a progress line on stderr while it runs
  // --perturb SEED[:N]: run under N perturbed schedules instead (check/Perturbation.hpp).
  std::string perturb;
  double perturb_band = 0.25;
  std::uint64_t perturb_skew = 200;
  std::map<std::string, std::map<std::string, std::string>> params;  // per kernel: flag -> value
};

// The kernel's request: its mode, trace and checks from `f`, its parameters from f.params[k.name].
KernelRequest make_request(const KernelInfo& k, const HardwareConfig& cfg, const RunFlags& f);

// --cross-sm: the census as JSON, with shares of the run's `events`.
nlohmann::json cross_sm_json(const CrossSmCensus& c, std::uint64_t events);

// What ran, where and how, and the check: the summary's lines that are not statistics.
// `power`: the power model's figures (null without a power section).
nlohmann::json run_metadata(const KernelReport& r, const HardwareConfig& cfg, const RunFlags& f,
                            const nlohmann::json& power);

struct KernelRun {
  KernelReport report;
  std::vector<StatSample> stats;  // every declared statistic of the run
  nlohmann::json power;           // the power model's figures (null without a power section)
  nlohmann::json summary;         // --json's object: the metadata, every statistic, the kernel's figures
  nlohmann::json stalls;          // --stats' object: per role and per warp, the summary, per SM (see keep_stalls)
};

// Runs kernel `k` on `cfg` with the options of `f`, writing the --report, --trace and --stats files
// it names.
KernelRun run_kernel(const KernelInfo& k, const HardwareConfig& cfg, RunFlags& f);

}  // namespace bwsim
