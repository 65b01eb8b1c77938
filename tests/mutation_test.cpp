// The mutation suites: the GEMM kernels with one classic synchronisation bug each (GemmBug).
// Every mutant of the first suite must be caught, by the numbers check or with the right error
// kind; the second suite's bugs (from how real warp-specialized kernels fail) are classified by
// what catches them: the default schedule, only perturbed schedules, or nothing.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/check/Perturbation.hpp"
#include "bwsim/kernels/Gemm.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

GemmResult mutant(GemmBug bug, std::uint32_t cluster_m = 1, std::uint32_t cluster_n = 1, bool two_sm = false) {
  return run_gemm(test::b200_config(), SimOptions{},
                  GemmParams{.m = 256, .n = 512, .k = 512, .ctas = cluster_m * cluster_n, .bug = bug,
                             .cluster_m = cluster_m, .cluster_n = cluster_n, .two_sm = two_sm},
                  true);
}

struct Mutant {
  GemmBug bug;
  Rule rule;
};

class MutationSuite : public testing::TestWithParam<Mutant> {};

TEST_P(MutationSuite, IsCaughtWithItsErrorKind) {
  EXPECT_SIM_MISUSE(mutant(GetParam().bug), GetParam().rule);
}

INSTANTIATE_TEST_SUITE_P(
    Gemm, MutationSuite,
    testing::Values(Mutant{GemmBug::MissingExpectTx, Rule::RaceEarlyRead},
                    Mutant{GemmBug::WrongTxBytes, Rule::RaceEarlyRead},
                    Mutant{GemmBug::ReleaseBeforeCommit, Rule::RaceStageReuse},
                    Mutant{GemmBug::NoPhaseFlip, Rule::RaceEarlyRead},
                    Mutant{GemmBug::EarlyEpilogueRead, Rule::RaceEarlyAccumulatorRead},
                    Mutant{GemmBug::EarlyDealloc, Rule::TmemAllocMisuse},
                    Mutant{GemmBug::SameQuadrant, Rule::TmemLaneQuadrant}),
    [](const auto& info) {
      std::string n = name_of(info.param.bug);
      std::erase(n, '-');
      return n;
    });

TEST(MutationSuite, AWrongInitialProducerPhaseDeadlocks) { EXPECT_SIM_DEADLOCK(mutant(GemmBug::WrongProducerPhase)); }

TEST(MutationSuite, AMulticastMaskMissingACtaDeadlocksThatCta) {
  try {
    mutant(GemmBug::McastMaskMissing, 2, 2);
    FAIL() << "no deadlock";
  } catch (const DeadlockError& e) {
    // CTA (0, 1) never gets A's piece from CTA (0, 0): its full barrier waits for those bytes.
    EXPECT_NE(std::string(e.what()).find("mainloop.full[0]"), std::string::npos) << e.what();
  }
}

TEST(MutationSuite, PairKernelMutantsAreCaughtToo) {
  EXPECT_SIM_MISUSE(mutant(GemmBug::ReleaseBeforeCommit, 2, 1, true), Rule::RaceStageReuse);
  EXPECT_SIM_MISUSE(mutant(GemmBug::EarlyEpilogueRead, 2, 1, true), Rule::RaceEarlyAccumulatorRead);
  EXPECT_SIM_MISUSE(mutant(GemmBug::MissingExpectTx, 2, 2), Rule::RaceEarlyRead);
}

TEST(MutationSuite, NumericMutantsFailTheCheck) {
  EXPECT_FALSE(mutant(GemmBug::NoZeroInit).matches);
  EXPECT_FALSE(mutant(GemmBug::SkipKBlock).matches);
  // tcgen05.ld results are undefined until wait::ld: the simulator leaves NaN there.
  const GemmResult early = mutant(GemmBug::UseBeforeWaitLd);
  EXPECT_FALSE(early.matches);
  EXPECT_NE(early.detail.find("nan"), std::string::npos) << early.detail;
}

TEST(MutationSuite, TheCorrectKernelsRaiseNothing) {
  EXPECT_TRUE(mutant(GemmBug::None).matches);
  EXPECT_TRUE(mutant(GemmBug::None, 2, 2).matches);
  EXPECT_TRUE(mutant(GemmBug::None, 2, 2, true).matches);
}

// ---------------------------------------------------------------------------- the second suite

// On a cluster the kernel's closing cluster barrier outlasts the last stores' SMEM reads, so an
// epilogue that skips its final wait gets away with it there (the suite below); alone, a CTA's
// epilogue warp exits while its last TMA store still reads its staging buffer.
TEST(MutationSuite, AnEpilogueThatExitsBeforeItsStoresReadSmemIsCaughtOnOneCta) {
  EXPECT_SIM_MISUSE(mutant(GemmBug::NoFinalStoreWait), Rule::ExitWithPendingStore);
}

// Default: the default schedule shows it without race checking (a hang, wrong numbers, a misuse
// rule that is not a race); HappensBefore: only the race checker's happens-before relation does
// (on the default schedule the numbers are right and nothing hangs); Perturbation: only a
// perturbed schedule does (with race checking on).
enum class CaughtBy { Default, HappensBefore, Perturbation, Nothing };

// What a run of `bug` on a 2x1 cluster of one CTA pair (4 tiles of 256 x 256, 8 k-tiles: the ring
// of 6 stages wraps) reports: empty when it completes with the right D.
std::string outcome(GemmBug bug, const HardwareConfig& cfg, const SimOptions& options) {
  try {
    const GemmResult r = run_gemm(cfg, options,
                                  {.m = 512, .n = 512, .k = 512, .ctas = 2, .bug = bug, .cluster_m = 2, .two_sm = true},
                                  true);
    return r.matches ? "" : "check failed";
  } catch (const MisuseError& e) {
    return std::string("misuse ") + rule_name(e.rule());
  } catch (const DeadlockError&) {
    return "deadlock";
  } catch (const SimError& e) {
    return std::string("error ") + e.what();
  }
}

// The default schedule without race checking, then with it; if both pass, 16 perturbed schedules
// (check/Perturbation.hpp). The outcome named is the run's with race checking on.
std::pair<CaughtBy, std::string> classify(GemmBug bug) {
  const std::string path = BWSIM_SOURCE_DIR "/sim_configs/b200.yaml";
  const std::string checked = outcome(bug, test::b200_config(), SimOptions{});
  if (!outcome(bug, test::b200_config(), SimOptions{.check_races = false}).empty()) return {CaughtBy::Default, checked};
  if (!checked.empty()) return {CaughtBy::HappensBefore, checked};
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    SimOptions options;
    perturb_options(options, seed, {});
    if (std::string o = outcome(bug, perturbed_config(path, {}, seed, {}), options); !o.empty())
      return {CaughtBy::Perturbation, o};
  }
  return {CaughtBy::Nothing, ""};
}

struct RealBug {
  GemmBug bug;
  CaughtBy by;
  const char* outcome;  // what catches it
};

class SecondMutationSuite : public testing::TestWithParam<RealBug> {};

TEST_P(SecondMutationSuite, IsCaughtAsTheTableSays) {
  const auto [by, got] = classify(GetParam().bug);
  EXPECT_EQ(by, GetParam().by) << name_of(GetParam().bug) << ": " << got;
  EXPECT_EQ(got, GetParam().outcome) << name_of(GetParam().bug);
}

// README "Checking a kernel" has this table with each bug's story.
INSTANTIATE_TEST_SUITE_P(
    Gemm, SecondMutationSuite,
    testing::Values(RealBug{GemmBug::StageCountOffByOne, CaughtBy::Default, "deadlock"},
                    RealBug{GemmBug::NoProducerTail, CaughtBy::Nothing, ""},
                    RealBug{GemmBug::NoClusterExitSync, CaughtBy::Default, "misuse tmem-out-of-allocation"},
                    RealBug{GemmBug::NoFenceMbarrierInit, CaughtBy::Default, "misuse barrier-uninitialized"},
                    RealBug{GemmBug::ReinitLiveBarrier, CaughtBy::Default, "misuse barrier-reinit-in-use"},
                    RealBug{GemmBug::AccumulatorArrivalsShort, CaughtBy::HappensBefore, "misuse race-accumulator-overwrite"},
                    RealBug{GemmBug::AccumulatorArrivalsLong, CaughtBy::Default, "deadlock"},
                    RealBug{GemmBug::AccStageNotAdvanced, CaughtBy::Default, "misuse race-early-accumulator-read"},
                    RealBug{GemmBug::EarlyAccumulatorRelease, CaughtBy::HappensBefore, "misuse race-accumulator-overwrite"},
                    RealBug{GemmBug::MissingProxyFence, CaughtBy::HappensBefore, "misuse race-missing-proxy-fence"},
                    RealBug{GemmBug::StagingBufferReuse, CaughtBy::Default, "check failed"},
                    RealBug{GemmBug::CommitMaskMissesPeer, CaughtBy::Default, "deadlock"},
                    RealBug{GemmBug::PairLoadsOwnBarrier, CaughtBy::Default, "deadlock"},
                    RealBug{GemmBug::ReuseStageEarly, CaughtBy::Default, "misuse over-arrival"},
                    RealBug{GemmBug::NoRelinquish, CaughtBy::Nothing, ""},
                    RealBug{GemmBug::NoFinalStoreWait, CaughtBy::Default, "misuse exit-with-pending-store"},
                    RealBug{GemmBug::ReleaseBeforeEpilogueSync, CaughtBy::HappensBefore,
                            "misuse race-accumulator-overwrite"}),
    [](const auto& info) {
      std::string n = name_of(info.param.bug);
      std::erase(n, '-');
      return n;
    });

}  // namespace
}  // namespace bwsim
