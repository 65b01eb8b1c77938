#pragma once
// googletest helpers for regression tests of barrier logic: assert that a run raises a given
// misuse rule (or deadlocks), and pin the sequence of phase completions of a barrier.
//
//   EXPECT_SIM_MISUSE(run_my_kernel(), Rule::StaleParity);
//   EXPECT_SIM_DEADLOCK(run_my_kernel());
//   EXPECT_EQ(flips_of(result, "mainloop.full[0]"), (std::vector<Cycle>{410, 1210}));
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

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
