// The softmax row block (kernels/SoftmaxCode) against the instruction counts of the compiled twin
// (tools/calibration/softmax_sass.csv, sm_90a, one row tile of 128 scores), FA4's choice of
// emulated scores by hand and what emulation and a rescale threshold change in the code, and the
// correction warps' blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "TestSupport.hpp"
#include "bwsim/kernel/SassBlock.hpp"
#include "bwsim/kernels/SoftmaxCode.hpp"

namespace bwsim {
extern const char* const kSoftmaxSassListing;  // tools/calibration/softmax_sass.txt, built in
}

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

TEST(SoftmaxCodeTest, ScheduledAsCompiledItRunsAsLongAsTheCompiledTwin) {
  // The row block list-scheduled (CoreBlock::Order::AsCompiled) against ptxas's own schedule of
  // the same row tile (the twin's SASS, run in its order), each alone on one sub-partition.
  const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  auto sass = [](const char* header, const HardwareConfig& c) {
    return sass_block(header, sass_listing_section(kSoftmaxSassListing, header), c).profile().work;
  };
  auto within = [](Cycle ours, Cycle compiled) {
    return std::abs(static_cast<double>(ours) - static_cast<double>(compiled)) <= 0.1 * static_cast<double>(compiled);
  };
  const Cycle plain90 = softmax_row_block(SoftmaxRowCode{}, h100).profile().work;
  EXPECT_TRUE(within(plain90, sass("== sm_90a k_softmax<false;1>", h100))) << plain90;  // 1328 vs 1348
  const Cycle poly90 = softmax_row_block(SoftmaxRowCode{.emulate = [](std::uint32_t i) { return i % 2 == 1; }}, h100)
                           .profile().work;
  EXPECT_TRUE(within(poly90, sass("== sm_90a k_softmax<true;1>", h100))) << poly90;  // 1226 vs 1353
  // SM100: FMNMX3 (pipes.minmax3) halves the max; ptxas pairs none of the twin's fp32 ops.
  HardwareConfig b200 = test::b200_config();
  const Cycle plain100 = softmax_row_block(SoftmaxRowCode{}, b200).profile().work;
  EXPECT_TRUE(within(plain100, sass("== sm_100a k_softmax<false;1>", b200))) << plain100;  // 1202 vs 1213
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
  // 128 scores = 4 fragments of 32; a pair is emulated when its first element k (0, 2, .., 30 in
  // its fragment) has k % freq >= freq - res, outside the first `start` fragments and the last.
  auto emulated = [](const std::function<bool(std::uint32_t)>& pick) {
    std::vector<std::uint32_t> at;
    for (std::uint32_t i = 0; i < 128; ++i)
      if (pick(i)) at.push_back(i);
    return at;
  };
  // freq 16, res 4, start 1: k = 12, 14, 28, 30 of fragments 1 and 2.
  EXPECT_EQ(emulated(fa4_emulated_pairs(128, 16, 4, 1)),
            (std::vector<std::uint32_t>{44, 45, 46, 47, 60, 61, 62, 63, 76, 77, 78, 79, 92, 93, 94, 95}));
  // freq 10: k % 10 >= 6 is k = 6, 8, 16, 18, 26, 28: 6 pairs per fragment; start 0 adds fragment 0.
  EXPECT_EQ(emulated(fa4_emulated_pairs(128, 10, 4, 0)).size(), 3u * 6 * 2);
  // freq 32 (causal head dim 192): k = 28, 30 only.
  EXPECT_EQ(emulated(fa4_emulated_pairs(128, 32, 4, 1)), (std::vector<std::uint32_t>{60, 61, 62, 63, 92, 93, 94, 95}));
}

TEST(SoftmaxCodeTest, EmulationMovesExp2FromTheMufuToTheFmaAndAluPipes) {
  // Paired code (SM100): an emulated pair replaces 2 MUFU.EX2 by FMNMX x2, FADD2.RM, 2 FADD2,
  // 3 FFMA2 and LEA x2, so 16 emulated scores (8 pairs): MUFU -16, FMA2 +48, ALU +32.
  const HardwareConfig& b200 = test::b200_config();
  const CoreBlock mufu = softmax_row_block(SoftmaxRowCode{.paired = true}, b200);
  const CoreBlock emu = softmax_row_block(SoftmaxRowCode{.emulate = fa4_emulated_pairs(128, 16, 4, 1), .paired = true}, b200);
  EXPECT_EQ(mufu.count(CoreOp::Mufu) - emu.count(CoreOp::Mufu), 16u);
  EXPECT_EQ(emu.count(CoreOp::Fma2) - mufu.count(CoreOp::Fma2), 48u);
  EXPECT_EQ(emu.count(CoreOp::Alu) - mufu.count(CoreOp::Alu), 32u);
  EXPECT_EQ(emu.count(CoreOp::Cvt), mufu.count(CoreOp::Cvt));
  // The stale max of a rescale threshold: one compare and three selects.
  const CoreBlock stale = softmax_row_block(SoftmaxRowCode{.paired = true, .stale_max = true}, b200);
  EXPECT_EQ(stale.count(CoreOp::Alu) - mufu.count(CoreOp::Alu), 4u);
}

TEST(SoftmaxCodeTest, TheCorrectionBlocksScaleEachValueOnce) {
  const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  // 128 values of O: 128 FMUL, or 64 FMUL2 on SM100.
  EXPECT_EQ(o_rescale_block(128, h100).count(CoreOp::Fma), 128u);
  EXPECT_EQ(o_rescale_block(128, test::b200_config()).count(CoreOp::Fma2), 64u);
  EXPECT_EQ(o_rescale_block(128, test::b200_config()).count(CoreOp::Fma), 0u);
  // Normalising: one MUFU.RCP, the multiplies, one F2FP per pair.
  const CoreBlock norm = o_normalize_block(64, test::b200_config());
  EXPECT_EQ(norm.count(CoreOp::Mufu), 1u);
  EXPECT_EQ(norm.count(CoreOp::Fma2), 32u);
  EXPECT_EQ(norm.count(CoreOp::Cvt), 32u);
}

}  // namespace
}  // namespace bwsim
