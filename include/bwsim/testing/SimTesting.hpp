#pragma once
// googletest helpers for regression tests of barrier logic: assert that a run raises a given
// misuse rule (or deadlocks), pin the sequence of phase completions of a barrier, and run a
// kernel under perturbed schedules (check/Perturbation.hpp) asserting the same for every one.
//
//   EXPECT_SIM_MISUSE(run_my_kernel(), Rule::StaleParity);
//   EXPECT_SIM_DEADLOCK(run_my_kernel());
//   EXPECT_EQ(flips_of(result, "mainloop.full[0]"), (std::vector<Cycle>{410, 1210}));
//   for_each_perturbed_schedule(path, 16, options, [](const HardwareConfig& c, const SimOptions& o, auto seed) {
//     const RunResult r = run_my_kernel(c, o);
//     EXPECT_TRUE(alternate(flips_of(r, "full[0]"), flips_of(r, "empty[0]")));
//   });
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "bwsim/check/Perturbation.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim::simtest {

// The cycles at which the barrier named `name` (of CTA `cta`) completed its phases 0, 1, 2, ...
// Needs SimOptions::record_phase_flips.
inline std::vector<Cycle> flips_of(const RunResult& r, std::string_view name, std::uint32_t cta = 0) {
  std::vector<Cycle> out;
  for (const PhaseFlip& f : r.phase_flips)
    if (f.name == name && f.cta == cta) out.push_back(f.cycle);
  return out;
}

// True when two barriers' phase completions interleave as a stage's full and empty barriers must:
// first[0] < second[0] < first[1] < second[1] < ... (filled, released, refilled, ...), with one
// more or the same number of first's.
inline bool alternate(const std::vector<Cycle>& first, const std::vector<Cycle>& second) {
  if (second.size() > first.size() || first.size() > second.size() + 1) return false;
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (i < second.size() && !(first[i] < second[i])) return false;
    if (i + 1 < first.size() && !(second[i] < first[i + 1])) return false;
  }
  return true;
}

// Calls run(config, options, seed) once per perturbed schedule, seeds first .. first + count - 1:
// the config at `config_path` with its latencies drawn for the seed, and `base` with the seed's
// tie order and SM skew. A run that raises a simulation error fails the test naming the seed
// (bwsim run ... --perturb SEED reproduces a kernel's schedule from the command line).
template <class Fn>
void for_each_perturbed_schedule(const std::string& config_path, std::uint32_t count, const SimOptions& base, Fn run,
                                 const Perturbation& p = {}, std::uint64_t first = 1) {
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    SCOPED_TRACE("perturbed schedule, seed " + std::to_string(seed));
    const HardwareConfig config = perturbed_config(config_path, {}, seed, p);
    SimOptions options = base;
    perturb_options(options, seed, p);
    try {
      run(config, options, seed);
    } catch (const SimError& e) {
      ADD_FAILURE() << "seed " << seed << ":\n" << e.what();
    }
  }
}

}  // namespace bwsim::simtest

// Runs `statement`; fails unless it throws a MisuseError of `rule`. The error text is printed on
// failure so the located message is visible.
#define EXPECT_SIM_MISUSE(statement, expected)                                                          \
  do {                                                                                                \
    try {                                                                                             \
      statement;                                                                                      \
      ADD_FAILURE() << "expected misuse " << ::bwsim::rule_name(expected) << ", nothing was raised";     \
    } catch (const ::bwsim::MisuseError& e_) {                                                        \
      EXPECT_EQ(e_.rule(), expected) << "raised " << ::bwsim::rule_name(e_.rule()) << ":\n" << e_.what(); \
    }                                                                                                 \
  } while (0)

#define EXPECT_SIM_DEADLOCK(statement)                                    \
  do {                                                                    \
    try {                                                                 \
      statement;                                                          \
      ADD_FAILURE() << "expected a deadlock, the run completed";          \
    } catch (const ::bwsim::DeadlockError&) {                             \
    } catch (const ::bwsim::SimError& e_) {                               \
      ADD_FAILURE() << "expected a deadlock, got:\n" << e_.what();        \
    }                                                                     \
  } while (0)
