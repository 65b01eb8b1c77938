// The proving kernel end to end: byte-exact copies in every swizzle mode and for shapes that are
// not multiples of the box, and the pipelining gain of 4 stages over 1 derived by hand.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/kernels/TmaCopy.hpp"

namespace bwsim {
namespace {

TmaCopyResult copy(const TmaCopyParams& p, Mode mode = Mode::Functional) {
  return run_tma_copy(test::unit_config(), SimOptions{.mode = mode}, p, true);
}

struct SwizzleCase {
  Swizzle swizzle;
  std::uint32_t box_cols;  // bf16 columns: the box's inner extent must fit the swizzle span
};

class TmaCopySwizzle : public testing::TestWithParam<SwizzleCase> {};

TEST_P(TmaCopySwizzle, CopiesNonMultipleShapeByteForByte) {
  // 100 x 200 bf16 with 64-row boxes: the last row of tiles and column of tiles are partial, so
  // loads zero-fill and stores must clip (the padding sentinel past column 200 stays untouched).
  const TmaCopyParams p{.rows = 100, .cols = 200, .dtype = DataType::BF16, .box_rows = 64,
                        .box_cols = GetParam().box_cols, .stages = 3, .swizzle = GetParam().swizzle,
                        .consumers = 2, .consume_cycles = 7, .row_pitch = 448};
  const TmaCopyResult r = copy(p);
  ASSERT_TRUE(r.checked);
  EXPECT_TRUE(r.matches) << r.mismatch;
  EXPECT_EQ(r.tiles, 2u * ((200 + p.box_cols - 1) / p.box_cols));
}

INSTANTIATE_TEST_SUITE_P(AllModes, TmaCopySwizzle,
                         testing::Values(SwizzleCase{Swizzle::None, 48}, SwizzleCase{Swizzle::B32, 16},
                                         SwizzleCase{Swizzle::B64, 32}, SwizzleCase{Swizzle::B128, 64}),
                         [](const auto& info) { return std::string(name_of(info.param.swizzle)); });

TEST(TmaCopy, SplitsTilesAcrossCtasAndStillMatches) {
  const TmaCopyParams p{.rows = 130, .cols = 72, .dtype = DataType::U8, .box_rows = 32, .box_cols = 32,
                        .stages = 2, .swizzle = Swizzle::B32, .consumers = 1, .ctas = 3};
  const TmaCopyResult r = copy(p);
  EXPECT_TRUE(r.matches) << r.mismatch;
  EXPECT_EQ(r.run.ctas, 3u);
}

TEST(TmaCopy, TimingModeMovesNoBytesButTakesTheSameCycles) {
  const TmaCopyParams p{.rows = 128, .cols = 128, .dtype = DataType::BF16, .box_rows = 64, .box_cols = 64};
  const TmaCopyResult functional = copy(p);
  const TmaCopyResult timing = copy(p, Mode::Timing);
  EXPECT_FALSE(timing.checked);
  EXPECT_EQ(timing.run.cycles, functional.run.cycles);
  EXPECT_EQ(timing.run.events, functional.run.events);
}

// unit_test.yaml: warp issue 1, arrive 5, wakeup 10, TMA issue 2, load latency 100, store latency 50,
// 64 B/cycle. A 64 x 256 u8 tensor in 64 x 64 boxes is 4 tiles of 4096 B = 64 streaming cycles each.
// Only the producer and the store warp run (no consumer warps).
//
// Set-up: init (1) then syncthreads, which releases both warps at P0 = 11; the producer's first
// acquire (1) and arrive.expect_tx (1) follow, so the first load issues at 13.
//
// 1 stage: each tile is strictly serial. Load: issue 2 + stream 64 + latency 100, the store warp
// wakes 10 later and issues its store 2 later, which reads SMEM for 64 cycles and counts as read
// (and written) store latency 50 after; its wait_group.read wakes it, it releases the stage
// (arrive 5) and the producer wakes 10 later: 308 cycles per tile from one load issue to the next.
// After the fourth load: 293 cycles to the last store's read-done, then the store warp's release
// lands 5 later and the producer's tail wakes 10 after it: 13 + 3 * 308 + 293 + 15 = 1245.
//
// 4 stages: the four loads stream back to back on the one TMA unit (loads and stores share it), so
// the stores queue behind them: the first store reads SMEM from P0 + 259 to P0 + 323 and each later
// one 64 + 50 + 4 cycles after (its read-done, the store warp's wake-up and its issue steps); the
// last read completes at 19 + 527 + 4 * 50 = 746, and the producer's tail wakes 15 after: 761.
//
// The difference, 484 cycles, is the overlap: three loads that no longer wait for the previous
// tile's store, minus the stores queueing behind the load stream on the shared TMA unit.
TEST(TmaCopy, FourStagesOverlapLoadsWithStoresByTheDerivedCycles) {
  TmaCopyParams p{.rows = 64, .cols = 256, .dtype = DataType::U8, .box_rows = 64, .box_cols = 64,
                  .stages = 1, .swizzle = Swizzle::None, .consumers = 0};
  const Cycle one_stage = copy(p).run.cycles;
  p.stages = 4;
  const TmaCopyResult four = copy(p);
  EXPECT_TRUE(four.matches) << four.mismatch;
  EXPECT_EQ(one_stage, 1245u);
  EXPECT_EQ(four.run.cycles, 761u);
  EXPECT_EQ(one_stage - four.run.cycles, 484u);
}

TEST(TmaCopy, RejectsRowPitchSmallerThanARow) {
  const TmaCopyParams p{.rows = 8, .cols = 64, .dtype = DataType::F32, .row_pitch = 128};
  EXPECT_THROW(copy(p), InputError);
}

}  // namespace
}  // namespace bwsim
