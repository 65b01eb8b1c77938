#include "bwsim/check/Perturbation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Median.hpp"
#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

// A uniform draw in [0, 1) from a splitmix64 stream.
double uniform(std::uint64_t& state) { return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53; }

bool is_latency(const std::string& key) {
  const std::string_view last = std::string_view(key).substr(key.rfind('.') + 1);
  return last.find("latency") != std::string_view::npos;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

PerturbSeeds parse_perturb_seeds(std::string_view text) {
  unsigned long long seed = 0;
  unsigned runs = 1;
  char colon = 0, extra = 0;
  const std::string s(text);
  const int n = std::sscanf(s.c_str(), "%llu%c%u%c", &seed, &colon, &runs, &extra);
  if (!((n == 1) || (n == 3 && colon == ':')) || seed == 0 || runs == 0 || runs > 100000)
    throw InputError(fmt::format("--perturb: expected SEED[:N] with SEED >= 1 and N >= 1, got '{}'", text));
  return {seed, runs};
}

HardwareConfig perturbed_config(const std::string& path, const std::vector<std::string>& overrides,
                                std::uint64_t seed, const Perturbation& p) {
  std::uint64_t draws = seed;
  std::vector<std::string> set = overrides;
  for (const auto& [key, value] : config_values(path, overrides)) {
    if (!is_latency(key) || value.empty() || value.find_first_not_of("0123456789") != std::string::npos) continue;
    const double factor = 1 - p.latency_band + 2 * p.latency_band * uniform(draws);
    set.push_back(fmt::format("{}={}", key, std::llround(std::max(0.0, std::stod(value) * factor))));
  }
  return load_config(path, set);
}

void perturb_options(SimOptions& options, std::uint64_t seed, const Perturbation& p) {
  options.perturb_seed = seed;
  options.perturb_sm_skew = p.sm_skew;
}

std::vector<PerturbedRun> run_perturbed(const KernelInfo& kernel, const std::string& config_path,
                                        const std::vector<std::string>& overrides, const KernelRequest& request,
                                        PerturbSeeds seeds, const Perturbation& p) {
  std::vector<PerturbedRun> runs;
  for (std::uint32_t i = 0; i < seeds.runs; ++i) {
    PerturbedRun r{.seed = seeds.first + i};
    const HardwareConfig cfg = perturbed_config(config_path, overrides, r.seed, p);
    KernelRequest req{cfg, request.options, request.args, request.check};
    req.options.trace_path.clear();  // one trace for N runs would be overwritten N times
    req.options.progress = nullptr;
    perturb_options(req.options, r.seed, p);
    try {
      const KernelReport rep = kernel.run(req);
      r.cycles = rep.run.cycles;
      r.hbm_read_bytes = rep.run.memory.hbm_read_bytes;
      r.ok = !rep.checked || rep.check_passed;
      r.outcome = r.ok ? "ok" : "check failed";
      r.detail = rep.checked ? rep.check_detail : "not checked (add --functional --check)";
    } catch (const MisuseError& e) {
      r.outcome = fmt::format("misuse {}", rule_name(e.rule()));
      r.detail = first_line(e.what());
    } catch (const DeadlockError& e) {
      r.outcome = "deadlock";
      r.detail = first_line(e.what());
    } catch (const WatchdogError& e) {
      r.outcome = "watchdog";
      r.detail = first_line(e.what());
    } catch (const SimError& e) {
      r.outcome = "error";
      r.detail = first_line(e.what());
    }
    runs.push_back(std::move(r));
  }
  return runs;
}

std::string perturbed_runs_text(const std::vector<PerturbedRun>& runs, const Perturbation& p) {
  std::string out = fmt::format(
      "perturbed schedules: latencies x [{:.2f}, {:.2f}], ties in drawn order, SM start skew up to {} cycles\n"
      "{:>8}  {:<26} {:>12} {:>14}  {}\n",
      1 - p.latency_band, 1 + p.latency_band, p.sm_skew, "seed", "outcome", "cycles", "HBM read MB", "detail");
  std::uint32_t failed = 0;
  for (const PerturbedRun& r : runs) {
    out += fmt::format("{:>8}  {:<26} {:>12} {:>14}  {}\n", r.seed, r.outcome, r.ok ? fmt::to_string(r.cycles) : "-",
                       r.ok ? fmt::format("{:.1f}", static_cast<double>(r.hbm_read_bytes) / 1e6) : "-", r.detail);
    failed += !r.ok;
  }
  // The completed runs' spread: a chaotic kernel's time is a distribution (the upper median, as
  // the GEMM twin reports its launches, and the extremes).
  std::vector<Cycle> cycles;
  for (const PerturbedRun& r : runs)
    if (r.ok) cycles.push_back(r.cycles);
  if (!cycles.empty())
    out += fmt::format("cycles of the {} completed: upper median {}, {} to {}\n", cycles.size(), upper_median(cycles),
                       *std::min_element(cycles.begin(), cycles.end()), *std::max_element(cycles.begin(), cycles.end()));
  out += fmt::format("{} of {} schedules failed", failed, runs.size());
  for (const PerturbedRun& r : runs)
    if (!r.ok) {
      out += fmt::format("; reproduce the first with --perturb {}", r.seed);
      break;
    }
  return out + "\n";
}

}  // namespace bwsim
