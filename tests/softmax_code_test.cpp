// The softmax row block (kernels/SoftmaxCode) against the instruction counts of the compiled twin
// (tools/calibration/softmax_sass.csv, sm_90a, one row tile of 128 scores), and FA4's choice of
// emulated scores by hand.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/kernels/SoftmaxCode.hpp"

namespace bwsim {
namespace {

TEST(SoftmaxCodeTest, TheRowBlockHasTheCompiledTwinsInstructionCounts) {
  const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  // k_softmax<false>: FMNMX 128; FFMA 130 + FADD 127 + FMUL 1; MUFU.EX2 129; F2FP 64.
  const CoreBlock plain = softmax_row_block(SoftmaxRowCode{}, h100);
  EXPECT_EQ(plain.count(CoreOp::Alu), 128u);
  EXPECT_EQ(plain.count(CoreOp::Fma), 258u);
  EXPECT_EQ(plain.count(CoreOp::Mufu), 129u);
  EXPECT_EQ(plain.count(CoreOp::Cvt), 64u);
  // k_softmax<true> (the odd scores in software): FMNMX 192 + LEA 64; FFMA 322 + FADD 255 +
  // FADD.RM 64 + FMUL 1; MUFU.EX2 65.
  const CoreBlock poly = softmax_row_block(SoftmaxRowCode{.emulate = [](std::uint32_t i) { return i % 2 == 1; }}, h100);
  EXPECT_EQ(poly.count(CoreOp::Alu), 256u);
  EXPECT_EQ(poly.count(CoreOp::Fma), 642u);
  EXPECT_EQ(poly.count(CoreOp::Mufu), 65u);
  EXPECT_EQ(poly.count(CoreOp::Cvt), 64u);
}

TEST(SoftmaxCodeTest, PairedCodeHalvesTheFp32InstructionsOnSm100) {
  const CoreBlock paired = softmax_row_block(SoftmaxRowCode{.paired = true}, test::b200_config());
  // 64 FFMA2 for x; the sum: 56 + 7 FADD2 over pairs, one FADD for the last pair, then l * corr +
  // sum; plus FMUL and FFMA for the max's scale and the correction.
  EXPECT_EQ(paired.count(CoreOp::Fma2), 64u + 56u + 7u);
  EXPECT_EQ(paired.count(CoreOp::Fma), 4u);
  EXPECT_EQ(paired.count(CoreOp::Mufu), 129u);
  // A paired row whose pair is half emulated is an error.
  EXPECT_THROW(softmax_row_block(SoftmaxRowCode{.emulate = [](std::uint32_t i) { return i == 5; }, .paired = true},
                                 test::b200_config()),
               std::invalid_argument);
}

TEST(SoftmaxCodeTest, Fa4EmulatesThePairsItsFrequencyPicks) {
  // 128 scores = 4 fragments of 16 pairs; freq 16, res 4: pairs 12..15 of fragments 1 and 2 (the
  // first fragment before start 1 and the last one use the MUFU only): 8 pairs, 16 scores.
  const auto pick = fa4_emulated_pairs(128, 16, 4, 1);
  std::uint32_t emulated = 0;
  for (std::uint32_t i = 0; i < 128; ++i) emulated += pick(i) ? 1 : 0;
  EXPECT_EQ(emulated, 16u);
  EXPECT_FALSE(pick(2 * 11 + 32));  // fragment 1, pair 11
  EXPECT_TRUE(pick(2 * 12 + 32));   // fragment 1, pair 12
  EXPECT_TRUE(pick(2 * 12 + 33));   // its second score
  EXPECT_FALSE(pick(2 * 12 + 96));  // the last fragment
}

}  // namespace
}  // namespace bwsim
