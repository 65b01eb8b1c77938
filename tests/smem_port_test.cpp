// The SMEM data port of generic ld.shared / st.shared (Warp::st_shared, core/PortCalendar): exact
// cycles on unit_test.yaml with the H100's one-warp path (2 cycles per instruction, 64 B/clk) and
// its 128 B/clk port, the calendar's gap filling, and the access-width errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "TestSupport.hpp"
#include "bwsim/core/PortCalendar.hpp"
#include "bwsim/hw/sm/SmemBackground.hpp"
#include "bwsim/hw/tensor/sm90/Wgmma.hpp"
#include "bwsim/kernel/WgmmaAccumulator.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

TEST(PortCalendarTest, ARequestTakesTheFirstFreeCyclesFromItsStartFillingEarlierGaps) {
  PortCalendar port;
  EXPECT_EQ(port.reserve(0, 10, 2), 12u);  // [10, 12)
  EXPECT_EQ(port.reserve(0, 0, 4), 4u);    // [0, 4): before the later request
  EXPECT_EQ(port.reserve(0, 0, 8), 14u);   // [4, 10) and [12, 14)
  EXPECT_EQ(port.intervals(), 1u);         // [0, 14), merged
  EXPECT_EQ(port.reserve(0, 3, 1), 15u);   // busy until 14
  EXPECT_EQ(port.reserve(0, 20, 0), 20u);  // nothing to move
  EXPECT_EQ(port.reserve(30, 30, 5), 35u);
  EXPECT_EQ(port.intervals(), 1u);  // [0, 15) ended before 30: dropped
}

TEST(PortCalendarTest, FreeFromIsTheEndOfTheBusyRunHoldingTheCycle) {
  PortCalendar port;
  port.reserve(0, 10, 2);   // [10, 12)
  port.reserve(0, 12, 8);   // [12, 20): merged into [10, 20)
  port.reserve(0, 30, 4);   // [30, 34)
  EXPECT_EQ(port.free_from(0, 5), 5u);
  EXPECT_EQ(port.free_from(0, 11), 20u);
  EXPECT_EQ(port.free_from(0, 20), 20u);  // the run ends before 20
  EXPECT_EQ(port.free_from(0, 31), 34u);
  EXPECT_EQ(port.free_from(34, 34), 34u);  // the runs that ended are dropped
  EXPECT_EQ(port.intervals(), 0u);
}

// The port's share left by wgmma operand reads and landing TMA boxes, 128 B/clk: 16 port cycles
// take 16 alone; 64 beside 96 B/clk (a quarter left); beside 128 B/clk from cycle 10 to 20, the
// first 10 at the whole rate, then an eighth (the least share) for 10 (1.25 done), then the 4.75
// left: 25; two boxes landing at 64 B/clk each count only the landing rate, 64 (half left): 32.
TEST(SmemBackgroundTest, LdStSharedTakeWhatTheUnitsLeaveOfThePort) {
  using Source = SmemBackground::Source;
  SmemBackground alone;
  EXPECT_EQ(alone.stretch(0, 0, 16, 128, 64), 16u);
  SmemBackground mma;
  mma.add(0, 0, 100, 96, Source::Mma);
  EXPECT_EQ(mma.stretch(0, 0, 16, 128, 64), 64u);
  EXPECT_EQ(mma.stretch(100, 100, 16, 128, 64), 16u);  // ended by now: dropped
  EXPECT_EQ(mma.intervals(), 0u);
  SmemBackground burst;
  burst.add(0, 10, 20, 128, Source::Mma);
  EXPECT_EQ(burst.stretch(0, 0, 16, 128, 64), 25u);
  SmemBackground landing;
  landing.add(0, 0, 100, 64, Source::Landing);
  landing.add(0, 0, 100, 64, Source::Landing);
  EXPECT_EQ(landing.stretch(0, 0, 16, 128, 64), 32u);
  // An SM that never stretches keeps only a bounded number of ended intervals.
  SmemBackground unasked;
  for (Cycle t = 0; t < 1000; ++t) unasked.add(t, t, t + 1, 64, Source::Landing);
  EXPECT_LE(unasked.intervals(), 64u);
}

HardwareConfig h100_path() {
  HardwareConfig c = test::unit_config();
  c.smem.bytes_per_cycle = 128;
  c.smem.instruction_cycles = 2;
  c.smem.warp_bytes_per_cycle = 64;
  c.smem.proxy_fence_cycles = 6;
  return c;
}

// Each of `warps` warps stores `bytes` at width `width` into its own 2 KiB after a bar.sync;
// returns each warp's cycles from the bar.sync to its store done.
std::vector<Cycle> store_times(std::uint32_t warps, std::uint32_t bytes, std::uint32_t width) {
  std::vector<Cycle> took(warps);
  const HardwareConfig config = h100_path();
  Simulator sim(config, SimOptions{.mode = Mode::Timing});
  sim.launch("smem", LaunchConfig{.grid_ctas = 1, .block_threads = 32 * warps, .dynamic_smem_bytes = 2048 * warps},
             [&](Warp& w) -> Task {
               co_await w.syncthreads();
               const Cycle start = w.now();
               w.st_shared(SmemAddr{2048 * w.warp_idx()}, std::vector<std::byte>(bytes), width);
               took[w.warp_idx()] = w.now() - start;
             });
  return took;
}

// One warp, 2 KiB: .b32 is 16 instructions, 16 x 2 + 2048 / 64 = 64 cycles (31.5 B/clk measured:
// 65); .v4 4 instructions, 4 x 2 + 32 = 40 (50.4 B/clk measured: 40.6); the port's 16 cycles hide
// under either.
TEST(SmemPortTest, OneWarpTakesItsPathPerInstructionAndPerByte) {
  EXPECT_EQ(store_times(1, 2048, 4), std::vector<Cycle>{64});
  EXPECT_EQ(store_times(1, 2048, 16), std::vector<Cycle>{40});
  EXPECT_EQ(store_times(1, 2048, 0), std::vector<Cycle>{40});  // the widest the address allows
  EXPECT_EQ(store_times(1, 4, 0), std::vector<Cycle>{3});      // one .b32 instruction, one cycle of bytes
}

// Eight warps of 2 KiB .v4 at once: the port moves 16 KiB in 128 cycles, 16 per warp in turn (in
// the order the bar.sync resumes them), so the i-th is done at max(40, 16 i + 16): two by their
// path, the last at 128.
TEST(SmemPortTest, EightWarpsShareThePortsBytesPerCycle) {
  std::vector<Cycle> took = store_times(8, 2048, 16);
  std::sort(took.begin(), took.end());
  EXPECT_EQ(took, (std::vector<Cycle>{40, 40, 48, 64, 80, 96, 112, 128}));
}

TEST(SmemPortTest, AnAccessWidthOtherThan4816OrAnUnalignedVectorIsAMisuse) {
  const auto store = [](std::uint32_t offset, std::uint32_t width) {
    test::run_cta([=](Warp& w) -> Task {
      w.st_shared(SmemAddr{offset}, std::vector<std::byte>(64), width);
      co_return;
    });
  };
  EXPECT_SIM_MISUSE(store(0, 3), Rule::SmemMisaligned);
  EXPECT_SIM_MISUSE(store(4, 16), Rule::SmemMisaligned);
  EXPECT_SIM_MISUSE(store(8, 16), Rule::SmemMisaligned);
  store(16, 16);
  store(4, 4);
}

// fence.proxy.async takes 6 cycles of the SM's port: four warps fencing together after a bar.sync
// are done 6, 12, 18 and 24 cycles on (h100_epilogue.csv "epilogue_fence_bar_wg1": 25.7 after the
// bars). A warp's conversions issue between its stores: 2 KiB at .b32 with 16 cvt (2 cycles each
// on 16 lanes) takes the stores' 64 cycles, not 31 + 64.
TEST(SmemPortTest, AProxyFenceTakesPortCyclesAndConversionsHideUnderTheStores) {
  const HardwareConfig config = h100_path();
  std::vector<Cycle> fenced;
  Cycle converted = 0, then_stored = 0;
  Simulator sim(config, SimOptions{.mode = Mode::Timing});
  sim.launch("smem", LaunchConfig{.grid_ctas = 1, .block_threads = 128, .dynamic_smem_bytes = 8192}, [&](Warp& w) -> Task {
    co_await w.syncthreads();
    Cycle start = w.now();
    w.fence_proxy_async();
    fenced.push_back(w.now() - start);
    co_await w.syncthreads();
    if (w.warp_idx() != 0) co_return;
    const std::vector<std::byte> chunk(2048);
    start = w.now();
    w.st_shared_tensor(SmemAddr{0}, chunk, 4, {CorePipe::Cvt, 16});
    converted = w.now() - start;
    start = w.now();
    w.execute(CorePipe::Cvt, 16);
    w.st_shared_tensor(SmemAddr{2048}, chunk, 4);
    then_stored = w.now() - start;
  });
  std::sort(fenced.begin(), fenced.end());
  EXPECT_EQ(fenced, (std::vector<Cycle>{6, 12, 18, 24}));
  EXPECT_EQ(converted, 64u);
  EXPECT_EQ(then_stored, 31u + 64u);
}

// A bar.sync arrives once the SM's port has moved the stores queued before it (every warp's): two
// warpgroups each storing 2 KiB per warp (.b32: a 64-cycle path, 16 port cycles) fill the port
// from 0 to 128, the first warpgroup's warps by 64, the second's by 80..128; the first's bar.sync
// still arrives at 128, so both leave it at 128 + named_barrier_latency (10); without waiting for
// the port the first would leave at 64 + 10.
TEST(SmemPortTest, ABarSyncArrivesAfterTheStoresQueuedOnThePort) {
  const HardwareConfig config = h100_path();
  std::vector<Cycle> left(8);
  Simulator sim(config, SimOptions{.mode = Mode::Timing});
  sim.launch("smem", LaunchConfig{.grid_ctas = 1, .block_threads = 256, .dynamic_smem_bytes = 16384}, [&](Warp& w) -> Task {
    co_await w.syncthreads();
    const Cycle start = w.now();
    w.st_shared(SmemAddr{2048 * w.warp_idx()}, std::vector<std::byte>(2048), 4);
    co_await w.bar_sync(1 + w.warpgroup_idx(), 128);
    left[w.warp_idx()] = w.now() - start;
  });
  EXPECT_EQ(left, std::vector<Cycle>(8, 128 + 10));
}

// A warp's st.shared beside a warpgroup's back-to-back wgmma.m64n256k16 SS (unit_test.yaml: 128
// math cycles each, reading 64 x 32 + 256 x 32 B = 10 KiB: 80 B/clk) gets 48 of the port's 128
// B/clk: 8 KiB (64 port cycles alone) takes ceil(64 / 0.375) = 171 (hw/sm/SmemBackground).
TEST(SmemPortTest, StoresTakeWhatWgmmaOperandReadsLeaveOfThePort) {
  const HardwareConfig config = test::unit_config();
  Cycle took = 0;
  Simulator sim(config, SimOptions{.mode = Mode::Timing});
  sim.launch("smem", LaunchConfig{.grid_ctas = 1, .block_threads = 160, .dynamic_smem_bytes = 65536},
             [&](Warp& w) -> Task {
               if (w.warpgroup_idx() == 0) {
                 WgmmaAccumulator acc(w, 256);
                 const WgmmaShape shape{.a_type = DataType::BF16, .b_type = DataType::BF16, .n = 256};
                 w.wgmma_fence();
                 for (int i = 0; i < 2; ++i)
                   w.wgmma(acc, k_major_swizzle128_descriptor(0), k_major_swizzle128_descriptor(8192), shape, i > 0);
                 w.wgmma_commit_group();
                 co_await w.wgmma_wait_group(0);
                 co_return;
               }
               co_await w.sleep(10);  // inside the first wgmma
               const Cycle start = w.now();
               w.st_shared(SmemAddr{40960}, std::vector<std::byte>(8192), 16);
               took = w.now() - start;
             });
  EXPECT_EQ(took, 171u);
}

// st_shared / ld_shared move their bytes in both modes (a value that steers control flow);
// st_shared_tensor / ld_shared_tensor only in functional mode, as TMA does. Both take the same
// cycles (one warp, 2 KiB .v4: 40 each way) and the same checks.
TEST(SmemPortTest, TensorAccessesMoveTheirBytesInFunctionalModeOnlyAndTakeTheSameCycles) {
  const HardwareConfig config = h100_path();
  for (const Mode mode : {Mode::Functional, Mode::Timing}) {
    SCOPED_TRACE(mode == Mode::Functional ? "functional" : "timing");
    std::vector<std::byte> plain(2048), tensor(2048);
    std::vector<Cycle> took;
    Simulator sim(config, SimOptions{.mode = mode});
    sim.launch("smem", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 4096},
               [&](Warp& w) -> Task {
                 const std::vector<std::byte> ones(2048, std::byte{1});
                 Cycle start = w.now();
                 w.st_shared(SmemAddr{0}, ones);
                 took.push_back(w.now() - start);
                 start = w.now();
                 w.st_shared_tensor(SmemAddr{2048}, ones);
                 took.push_back(w.now() - start);
                 start = w.now();
                 w.ld_shared(SmemAddr{2048}, tensor);
                 took.push_back(w.now() - start);
                 start = w.now();
                 w.ld_shared_tensor(SmemAddr{0}, plain);
                 took.push_back(w.now() - start);
                 co_return;
               });
    EXPECT_EQ(took, (std::vector<Cycle>{40, 40, 40, 40}));
    const auto count = [](const std::vector<std::byte>& v) { return std::count(v.begin(), v.end(), std::byte{1}); };
    // ld_shared always reads what is there: the tensor store's ones only in functional mode.
    EXPECT_EQ(count(tensor), mode == Mode::Functional ? 2048 : 0);
    // The tensor load fills its buffer only in functional mode.
    EXPECT_EQ(count(plain), mode == Mode::Functional ? 2048 : 0);
  }
  // In timing mode a plain store's bytes reach a plain load.
  std::vector<std::byte> back(64);
  Simulator sim(config, SimOptions{.mode = Mode::Timing});
  sim.launch("smem", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 64}, [&](Warp& w) -> Task {
    w.st_shared(SmemAddr{0}, std::vector<std::byte>(64, std::byte{7}));
    w.ld_shared(SmemAddr{0}, back);
    co_return;
  });
  EXPECT_EQ(std::count(back.begin(), back.end(), std::byte{7}), 64);
}

}  // namespace
}  // namespace bwsim
