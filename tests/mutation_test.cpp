// The mutation suite: the GEMM kernels with one classic synchronisation bug each (GemmBug).
// Every mutant must be caught, by the numbers check or with the right error kind.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
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

}  // namespace
}  // namespace bwsim
