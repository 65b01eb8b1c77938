#pragma once
// Schedule perturbation: the same kernel under other timings, to find the bugs the one
// deterministic schedule hides (a stage reused early that is harmless while the producer is the
// slower side, a parity wait that goes wrong only when a warp falls two phases behind). One
// perturbed schedule is drawn from a seed:
//   - every configured latency (a config key naming a latency) scaled by a factor drawn from
//     [1 - band, 1 + band] (integers rounded, never below 0);
//   - the events of one cycle run in a drawn order rather than in the order they were scheduled;
//   - each SM's CTAs start up to `sm_skew` cycles late (drawn per SM).
// Every run either completes with the same functional result (the kernel's own check) or reports
// the misuse, deadlock, watchdog or check failure it hit, with the seed that reproduces it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

struct Perturbation {
  double latency_band = 0.25;
  Cycle sm_skew = 200;
};

// "SEED[:N]": N runs with seeds SEED, SEED + 1, ... (N defaults to 1; SEED >= 1).
struct PerturbSeeds {
  std::uint64_t first = 1;
  std::uint32_t runs = 1;
};
PerturbSeeds parse_perturb_seeds(std::string_view text);

// The config at `path` with `overrides`, its latencies scaled as `seed` draws them, and the
// options that shuffle ties and skew the SMs for `seed`.
HardwareConfig perturbed_config(const std::string& path, const std::vector<std::string>& overrides,
                                std::uint64_t seed, const Perturbation& p);
void perturb_options(SimOptions& options, std::uint64_t seed, const Perturbation& p);

struct PerturbedRun {
  std::uint64_t seed = 0;
  bool ok = false;
  std::string outcome;  // "ok", "misuse <rule>", "deadlock", "watchdog", "check failed", "error"
  std::string detail;   // the error's first line, or the check's summary
  Cycle cycles = 0;     // of a completed run
  std::uint64_t hbm_read_bytes = 0;  // of a completed run: how far the schedule changed the L2's hits
};

// Runs `kernel` as `request` asks (its mode, check and arguments) once per seed of `seeds` on the
// perturbed config and options.
std::vector<PerturbedRun> run_perturbed(const KernelInfo& kernel, const std::string& config_path,
                                        const std::vector<std::string>& overrides, const KernelRequest& request,
                                        PerturbSeeds seeds, const Perturbation& p = {});

// A table of the runs: seed, outcome, cycles, detail; the completed runs' upper median and extremes;
// the failures' reproducing flags.
std::string perturbed_runs_text(const std::vector<PerturbedRun>& runs, const Perturbation& p);

}  // namespace bwsim
