// CUDA-core blocks (kernel/CoreBlock, hw/sm/CoreInstructions, hw/sm/SubPartition): schedules
// alone and shared, derived by hand on unit_test.yaml: per sub-partition the FMA pipe takes a
// warp instruction per cycle (128 lanes / 4 / 32), the ALU pipe one per 2 cycles (64 lanes), the
// MUFU one per 8 (16 lanes); dependent latency 4 cycles (fma, alu, cvt), 18 (mufu); one issue
// slot per cycle.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/CoreBlock.hpp"
#include "bwsim/kernel/SassBlock.hpp"

namespace bwsim {
namespace {

CoreBlock chain(std::uint32_t n, const HardwareConfig& cfg) {
  CoreBlock b("chain");
  CoreBlock::Value v = b.input();
  for (std::uint32_t i = 0; i < n; ++i) v = b.fma({v});
  b.finish(cfg);
  return b;
}

CoreBlock independent(CoreOp op, std::uint32_t n, const HardwareConfig& cfg) {
  CoreBlock b("independent");
  for (std::uint32_t i = 0; i < n; ++i) b.op(op);
  b.finish(cfg);
  return b;
}

// Runs `blocks[w]` on warp w (nothing where it is null) after `delay[w]` cycles; returns each
// warp's clock when its block is done.
std::vector<Cycle> run_blocks(const std::vector<const CoreBlock*>& blocks, const std::vector<Cycle>& delay = {},
                              RunResult* result = nullptr) {
  std::vector<Cycle> end(blocks.size());
  const RunResult r = test::run_cta(
      [&](Warp& w) -> Task {
        const std::uint32_t i = w.warp_idx();
        if (i < delay.size() && delay[i]) co_await w.sleep(delay[i]);
        if (i < blocks.size() && blocks[i]) co_await w.run(*blocks[i]);
        if (i < blocks.size()) end[i] = w.now();
      },
      32 * static_cast<std::uint32_t>(blocks.size()), 4096, Mode::Timing);
  if (result) *result = r;
  return end;
}

TEST(CoreBlockTest, ADependentChainIssuesOneInstructionPerLatency) {
  const CoreBlock b = chain(4, test::unit_config());
  // Issues at 0, 4, 8, 12: the last issue slot ends at 13, its result at 16.
  EXPECT_EQ(b.profile().work, 13u);
  EXPECT_EQ(b.profile().drain, 3u);
  EXPECT_EQ(b.profile().issue_cycles, 4u);
  EXPECT_EQ(run_blocks({&b})[0], 16u);
}

TEST(CoreBlockTest, CompiledCodeIsListScheduledToHideLatencies) {
  // A chain of 4 dependent FMAs written before 4 independent ALU ops (2 cycles each on the pipe).
  auto build = [](CoreBlock::Order order) {
    CoreBlock b("chain then alu", order);
    CoreBlock::Value v = b.input();
    for (int i = 0; i < 4; ++i) v = b.fma({v});
    for (int i = 0; i < 4; ++i) b.alu();
    b.finish(test::unit_config());
    return b;
  };
  // As written: FMAs at 0, 4, 8, 12, the ALU ops at 13, 15, 17, 19: work 21 (the ALU pipe).
  const CoreBlock written = build(CoreBlock::Order::AsWritten);
  EXPECT_EQ(written.profile().work, 21u);
  // As compiled: FMA 0, ALU 1, ALU 3, FMA 4, ALU 5, ALU 7, FMA 8, FMA 12: work 13, drain 3.
  const CoreBlock compiled = build(CoreBlock::Order::AsCompiled);
  EXPECT_EQ(compiled.profile().work, 13u);
  EXPECT_EQ(compiled.profile().drain, 3u);
  std::vector<CoreOp> order;
  for (const CoreInstr& in : compiled.code()) order.push_back(in.op);
  EXPECT_EQ(order, (std::vector<CoreOp>{CoreOp::Fma, CoreOp::Alu, CoreOp::Alu, CoreOp::Fma, CoreOp::Alu, CoreOp::Alu,
                                        CoreOp::Fma, CoreOp::Fma}));
  EXPECT_EQ(compiled.code()[3].inputs[0], 0u);  // the second FMA still reads the first, renumbered
  EXPECT_EQ(compiled.code()[6].inputs[0], 3u);
}

TEST(CoreBlockTest, TwoWarpsOfOneSubPartitionShareItsIssueSlot) {
  const CoreBlock b = independent(CoreOp::Fma, 8, test::unit_config());
  // Alone: issues 0..7 (work 8), the last result at 11.
  EXPECT_EQ(b.profile().work, 8u);
  EXPECT_EQ(b.profile().drain, 3u);
  RunResult r;
  // Warps 0 and 4 on sub-partition 0 ask for 2 issue slots per cycle: each runs at half speed,
  // work done at 16, results at 19. Warp 1 has sub-partition 1 to itself: 11.
  const std::vector<Cycle> end = run_blocks({&b, &b, nullptr, nullptr, &b}, {}, &r);
  EXPECT_EQ(end[0], 19u);
  EXPECT_EQ(end[1], 11u);
  EXPECT_EQ(end[4], 19u);
  EXPECT_EQ(r.pipes.fma_busy_cycles, 24u);
  EXPECT_EQ(r.pipes.issue_cycles, 24u);
  // Warp 0's 19 cycles: 8 issue slots, 11 computing.
  EXPECT_EQ(r.warps[0].activity[static_cast<std::size_t>(Activity::Issue)], 8u);
  EXPECT_EQ(r.warps[0].activity[static_cast<std::size_t>(Activity::Compute)], 11u);
}

TEST(CoreBlockTest, LatencyBoundChainsOfOneSubPartitionRunSideBySide) {
  const CoreBlock b = chain(4, test::unit_config());
  // Each uses 4 of its 13 work cycles' issue slots and FMA cycles: 8/13 together, no slowdown.
  const std::vector<Cycle> end = run_blocks({&b, nullptr, nullptr, nullptr, &b});
  EXPECT_EQ(end[0], 16u);
  EXPECT_EQ(end[4], 16u);
}

TEST(CoreBlockTest, ABlockStartingLaterSharesOnlyWhileBothRun) {
  const CoreBlock b = independent(CoreOp::Fma, 8, test::unit_config());
  // Warp 0 alone for 4 cycles (4 of 8 done); from 4 both at half speed: warp 0's work is done at
  // 12 (results 15), warp 4 has done 4 by then and the rest alone by 16 (results 19).
  const std::vector<Cycle> end = run_blocks({&b, nullptr, nullptr, nullptr, &b}, {0, 0, 0, 0, 4});
  EXPECT_EQ(end[0], 15u);
  EXPECT_EQ(end[4], 19u);
}

TEST(CoreBlockTest, AMufuStreamIsBoundByItsPipeNotTheIssueSlot) {
  const CoreBlock b = independent(CoreOp::Mufu, 4, test::unit_config());
  // One per 8 cycles: issues at 0, 8, 16, 24; the pipe is busy until 32; the last result at 42.
  EXPECT_EQ(b.profile().work, 32u);
  EXPECT_EQ(b.profile().drain, 10u);
  // Warps 0 and 4: the MUFU asks for 2 of 1, each block at half speed: work done at 64, results
  // at 74. Warp 8 beside them (8 FFMAs, issue demand 1) gets the issue slots they leave: 1 - 2 x
  // 1/8 x 1/2 = 0.875, so its work takes 8 / 0.875 = 9.14 cycles, done at 10, results at 13;
  // it hardly slows the MUFU-bound blocks, which keep their half speed.
  const CoreBlock f = independent(CoreOp::Fma, 8, test::unit_config());
  const std::vector<Cycle> end = run_blocks({&b, nullptr, nullptr, nullptr, &b, nullptr, nullptr, nullptr, &f});
  EXPECT_EQ(end[0], 74u);
  EXPECT_EQ(end[4], 74u);
  EXPECT_EQ(end[8], 13u);
}

// A row-max phase on the ALU, then an exp2 phase on the MUFU: 32 ALU ops issue at 0, 2, ..., 62
// (the pipe busy to 64), then 8 MUFU ops at 63, 71, ..., 119 (busy to 127), the last result at
// 137. Alone: two segments, [0, 64) on the ALU and [64, 127) on the MUFU.
CoreBlock two_phases(const HardwareConfig& cfg) {
  CoreBlock b("phases");
  for (int i = 0; i < 32; ++i) b.alu();
  for (int i = 0; i < 8; ++i) b.mufu();
  b.finish(cfg);
  return b;
}

TEST(CoreBlockTest, PhasesOfWarpsInStepContendAndPhasesOutOfStepOverlap) {
  const CoreBlock b = two_phases(test::unit_config());
  EXPECT_EQ(b.profile().work, 127u);
  EXPECT_EQ(b.profile().drain, 10u);
  ASSERT_EQ(b.profile().segments.size(), 2u);
  EXPECT_EQ(b.profile().segments[0].cycles, 64u);
  EXPECT_DOUBLE_EQ(b.profile().segments[0].demand[1 + static_cast<std::size_t>(CorePipe::Alu)], 1.0);
  EXPECT_DOUBLE_EQ(b.profile().segments[1].demand[1 + static_cast<std::size_t>(CorePipe::Mufu)], 1.0);
  // In step (warps 0 and 4 from cycle 0): both in the ALU phase at half speed to 128, both in the
  // MUFU phase at half speed for 63 x 2 more, to 254; results at 264.
  std::vector<Cycle> end = run_blocks({&b, nullptr, nullptr, nullptr, &b});
  EXPECT_EQ(end[0], 264u);
  EXPECT_EQ(end[4], 264u);
  // Warp 4 64 cycles later: its ALU phase runs beside warp 0's MUFU phase (issue 33/64 + 7/63).
  // Only the MUFU op issued at 63, one cycle of it in the ALU segment (MUFU 1/64 there), makes
  // the MUFU ask for 1 + 1/64: both run at 64/65 while they overlap. Warp 0's 63 cycles take
  // 63 x 65/64 = 63.98: work done at 128, results at 138. Warp 4 has 64 - 64 x 64/65 = 0.98
  // cycles of its ALU phase left then, done alone at 129, its MUFU phase at 192, results at 202.
  end = run_blocks({&b, nullptr, nullptr, nullptr, &b}, {0, 0, 0, 0, 64});
  EXPECT_EQ(end[0], 138u);
  EXPECT_EQ(end[4], 202u);
}

TEST(CoreBlockTest, PairedFp32HalvesTheIssueSlotsOfAnIssueBoundMix) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"pipes.paired_fp32=true"});
  // 16 FADDs and 8 ALU ops, two FADDs per ALU op: the FMA pipe needs 16 cycles, the ALU 16, the
  // issue slot 24. In order: FADD 3k, 3k+1, ALU 3k+2; the last ALU op at 23 holds its pipe to 25
  // and its result is read at 27.
  CoreBlock single("fadd");
  for (int k = 0; k < 8; ++k) {
    single.fma();
    single.fma();
    single.alu();
  }
  single.finish(cfg);
  EXPECT_EQ(single.profile().work, 25u);
  EXPECT_EQ(single.profile().drain, 2u);
  // The same additions as 8 FADD2 (2 FMA cycles each): FADD2 at 2k, ALU at 2k + 1; the last ALU
  // op at 15 holds its pipe to 17, result at 19.
  CoreBlock paired("fadd2");
  for (int k = 0; k < 8; ++k) {
    paired.fma2();
    paired.alu();
  }
  paired.finish(cfg);
  EXPECT_EQ(paired.profile().work, 17u);
  EXPECT_EQ(paired.profile().drain, 2u);
  EXPECT_EQ(paired.profile().pipe_cycles[static_cast<std::size_t>(CorePipe::Fma)], 16u);
  EXPECT_EQ(paired.profile().issue_cycles, 16u);
}

// SASS as cuobjdump prints it: each opcode on its pipe, reading what earlier lines wrote. FFMA
// R4 at 0; the MUFU reads R4 (ready at 4) and issues at 4; the FMNMX waits for its result (4 + 18
// on unit_test.yaml); the STS (an issue slot only) reads the F2FP's R8..R11; the predicated BRA
// reads P0, written by nothing here.
TEST(CoreBlockTest, ASassListingRunsInItsOrderWithItsRegisterDependencies) {
  const char* listing = R"(  /*0000*/ FFMA R4, R2, R3, R4 ;
  /*0010*/ MUFU.EX2 R5, R4 ;
  /*0020*/ FMNMX R6, R5, R7, !PT ;
  /*0030*/ F2FP.BF16.F32.PACK_AB R8, R6, R5 ;
  /*0040*/ STS.128 [R1+0x10], R8 ;
  /*0050*/ @!P0 BRA `(.L_x_1) ;
)";
  const CoreBlock b = sass_block("listing", listing, test::unit_config());
  ASSERT_EQ(b.code().size(), 6u);
  EXPECT_EQ(b.count(CoreOp::Fma), 1u);
  EXPECT_EQ(b.count(CoreOp::Mufu), 1u);
  EXPECT_EQ(b.count(CoreOp::Alu), 1u);
  EXPECT_EQ(b.count(CoreOp::Cvt), 1u);
  EXPECT_EQ(b.count(CoreOp::Other), 2u);
  EXPECT_EQ(b.code()[1].inputs[0], 0u);  // MUFU <- FFMA (R4)
  EXPECT_EQ(b.code()[2].inputs[0], 1u);  // FMNMX <- MUFU (R5)
  EXPECT_EQ(b.code()[4].inputs[0], 3u);  // STS <- F2FP (R8)
  // FFMA 0, MUFU 4 (R4 ready), FMNMX 22 (R5), F2FP 26 (R6), STS 30 (R8), BRA 31: the last issue
  // slot ends at 32; the results: F2FP's at 30, the STS's at 31, the BRA's at 32.
  EXPECT_EQ(b.profile().work, 32u);
  EXPECT_EQ(b.profile().drain, 0u);
  EXPECT_EQ(sass_op("FMNMX3"), CoreOp::Alu);
  EXPECT_EQ(sass_op("FFMA2"), CoreOp::Fma2);
  EXPECT_EQ(sass_op("UIADD3"), CoreOp::Other);
}

TEST(CoreBlockTest, PairedFp32OnAnSmWithoutItIsAConfigError) {
  CoreBlock b("fadd2");
  b.fma2();
  try {
    b.finish(test::unit_config());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pipes.paired_fp32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bwsim
