// tcgen05.shift on unit_test.yaml: which rows move where (per 32-lane sub-partition, 8 columns),
// its place in the tensor pipe (timing, completion through tcgen05.commit), and its errors.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

using test::expect_misuse;
using test::run_cta;

constexpr SmemAddr kSlot{0};
constexpr MBarrierRef kBar{8};

// Every lane's 16 columns hold 100 lane + column; warp 0 shifts `shifts` times from column 0 and
// commits; every warp reads its 32 lanes back. Returns [lane][column].
std::vector<std::vector<std::uint32_t>> shifted(std::uint32_t shifts) {
  std::vector<std::vector<std::uint32_t>> out(128, std::vector<std::uint32_t>(16));
  run_cta(
      [&](Warp& w) -> Task {
        if (w.warp_idx() == 0) {
          w.mbarrier_init(kBar, 1);
          co_await w.tcgen05_alloc(kSlot, 32);
        }
        co_await w.syncthreads();
        const TmemAddr t{w.ld_shared_u32(kSlot)};
        const std::uint32_t lane0 = 32 * w.warp_idx();
        std::vector<std::uint32_t> tags(32 * 16);
        for (std::uint32_t l = 0; l < 32; ++l)
          for (std::uint32_t c = 0; c < 16; ++c) tags[l * 16 + c] = 100 * (lane0 + l) + c;
        w.tcgen05_st(TmemAddr::at(lane0, t.column()), TmemShape::S32x32b, 16, tags);
        co_await w.tcgen05_wait_st();
        w.tcgen05_fence_before_thread_sync();
        co_await w.syncthreads();
        if (w.warp_idx() == 0) {
          w.tcgen05_fence_after_thread_sync();
          for (std::uint32_t i = 0; i < shifts; ++i) w.tcgen05_shift(t);
          w.tcgen05_commit(kBar);
        }
        co_await w.mbarrier_wait(kBar, 0);
        w.tcgen05_fence_after_thread_sync();
        std::vector<std::uint32_t> back(32 * 16);
        w.tcgen05_ld(TmemAddr::at(lane0, t.column()), TmemShape::S32x32b, 16, back);
        co_await w.tcgen05_wait_ld();
        for (std::uint32_t l = 0; l < 32; ++l)
          for (std::uint32_t c = 0; c < 16; ++c) out[lane0 + l][c] = back[l * 16 + c];
        w.tcgen05_fence_before_thread_sync();
        co_await w.syncthreads();
        if (w.warp_idx() == 0) w.tcgen05_dealloc(t, 32);
      },
      128, 4096);
  return out;
}

TEST(TmemShiftTest, RowsMoveUpOneWithinEachSubPartitionOverEightColumns) {
  for (const std::uint32_t n : {1u, 3u}) {
    const auto t = shifted(n);
    for (std::uint32_t lane = 0; lane < 128; ++lane) {
      const std::uint32_t last = lane / 32 * 32 + 31;  // the sub-partition's last row keeps its value
      const std::uint32_t from = std::min(lane + n, last);
      for (std::uint32_t c = 0; c < 8; ++c) ASSERT_EQ(t[lane][c], 100 * from + c) << n << " lane " << lane << " col " << c;
      for (std::uint32_t c = 8; c < 16; ++c) ASSERT_EQ(t[lane][c], 100 * lane + c) << "outside the 256 bits";
    }
  }
}

// One shift: issued 1 cycle in, in the pipe at once, its rows moved shift_latency (40) after it
// starts, then the commit's arrive and the wakeup (15) as for an MMA; a second shift starts
// shift_cycles (12) after the first.
TEST(TmemShiftTest, ItTakesThePipeForShiftCyclesAndCompletesThroughTheCommit) {
  auto run = [](int shifts) {
    Cycle elapsed = 0;
    run_cta(
        [&](Warp& w) -> Task {
          const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 32);
          w.mbarrier_init(kBar, 1);
          const Cycle t0 = w.now();
          for (int i = 0; i < shifts; ++i) w.tcgen05_shift(t);
          w.tcgen05_commit(kBar);
          co_await w.mbarrier_wait(kBar, 0);
          elapsed = w.now() - t0;
          w.tcgen05_dealloc(t, 32);
        },
        32, 4096, Mode::Timing);
    return elapsed;
  };
  EXPECT_EQ(run(1), 1u + 40u + 15u);
  EXPECT_EQ(run(2), 1u + 12u + 40u + 15u);
}

void expect_shift_misuse(TmemAddr at, Rule rule, const std::string& message) {
  const MisuseError e = expect_misuse(
      [&] {
        run_cta(
            [&](Warp& w) -> Task {
              const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 32);
              w.tcgen05_shift(TmemAddr{t.raw + at.raw});
            },
            32, 4096);
      },
      rule);
  EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
}

TEST(TmemShiftTest, LaneAndColumnsAreChecked) {
  expect_shift_misuse(TmemAddr::at(16, 0), Rule::MmaInvalid, "PTX requires a lane aligned to 32");
  expect_shift_misuse(TmemAddr::at(32, 0), Rule::MmaInvalid, "a shift from a lane other than 0 is not modeled");
  expect_shift_misuse(TmemAddr::at(0, 28), Rule::TmemOutOfAllocation, "");
}

// Reading shifted columns before the shift's commit is observed is a race, as after an MMA.
TEST(TmemShiftTest, ReadingBeforeTheCommitIsARace) {
  EXPECT_SIM_MISUSE(run_cta(
                        [&](Warp& w) -> Task {
                          const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 32);
                          w.tcgen05_shift(t);
                          std::vector<std::uint32_t> back(32 * 8);
                          w.tcgen05_ld(t, TmemShape::S32x32b, 8, back);
                          co_await w.tcgen05_wait_ld();
                          w.tcgen05_dealloc(t, 32);
                        },
                        32, 4096),
                    Rule::RaceEarlyAccumulatorRead);
}

}  // namespace
}  // namespace bwsim
