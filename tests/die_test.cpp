// A chip of two dies: the near L2 half, the far half over the die-to-die link, the link's
// bandwidth, and its name on the critical-path line when it is the bound.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/kernels/TmaStream.hpp"

namespace bwsim {
namespace {

// The unit-test machine split into two dies of 2 SMs (SMs 0-1 and 2-3), with its 100 B/cycle,
// 200-cycle die-to-die link. Its first allocation, 0x7f0000000000, lies in 4 KiB granule
// 0x7f0000000: seven bits set, odd parity, so its home is die 1; the next 4 KiB granule
// (0x7f0000001, eight bits) is homed on die 0.
const HardwareConfig& two_die_config() {
  static const HardwareConfig cfg =
      load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"sm.gpcs=2", "dies.count=2"});
  return cfg;
}

// CTA 2 (SM 2, die 1) loads box A (homed on die 1) and later box B (homed on die 0); CTA 0 (SM 0,
// die 0) loads A after CTA 2 has it, then A again, then B. The durations run from the
// arrive.expect_tx (1 cycle) before each load to the wake.
struct FarHalfLoads {
  Cycle far_hit = 0, near_copy = 0, far_miss = 0, home_hit = 0;
  RunResult run;
};
FarHalfLoads far_half_loads(const HardwareConfig& cfg, L2Promotion promotion = L2Promotion::None) {
  Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
  const GmemAddr base = sim.gmem().alloc(8192);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = base, .dims = {128, 64},
                                          .strides = {128}, .box = {128, 32}, .swizzle = Swizzle::B128,
                                          .l2_promotion = promotion});
  EXPECT_EQ(base.value, 0x7f0000000000ull);
  FarHalfLoads out;
  out.run = sim.launch(
      "dies", LaunchConfig{.grid_ctas = 3, .block_threads = 32, .dynamic_smem_bytes = 8192}, [&](Warp& w) -> Task {
        const MBarrierRef bar{0};
        w.mbarrier_init(bar, 1);
        auto load = [&](std::int32_t row, std::uint32_t phase) -> Task {
          w.mbarrier_arrive_expect_tx(bar, 4096);
          w.tma_load(map, SmemAddr{1024}, bar, {0, row});
          co_await w.mbarrier_wait(bar, phase);
        };
        if (w.cta_idx() == 2) {
          co_await load(0, 0);  // A: a miss at its home, die 1's half
          co_await w.sleep(5000);
          const Cycle issue = w.now();
          co_await load(32, 1);  // B, after CTA 0 has fetched it from die 0's HBM: a hit at its home
          out.home_hit = w.now() - issue;
        } else if (w.cta_idx() == 0) {
          co_await w.sleep(1000);
          Cycle issue = w.now();
          co_await load(0, 0);
          out.far_hit = w.now() - issue;
          issue = w.now();
          co_await load(0, 1);
          out.near_copy = w.now() - issue;
          issue = w.now();
          co_await load(32, 0);
          out.far_miss = w.now() - issue;
        }
      });
  return out;
}

TEST(DieTest, AFarHalfHitPaysTheLinkAndItsLatencyAndIsThenCachedNear) {
  const FarHalfLoads l = far_half_loads(two_die_config());
  // Far hit: arrive 1, issue 2; the 4096 bytes cross the link at 100 B/cycle (41 cycles) and pay
  // its 200; the unit's own 64-cycle stream is hidden; + load latency 100, + wakeup 10 = 354. A
  // near hit (memory_test's) is 1 + 2 + 64 + 100 + 10 = 177.
  EXPECT_EQ(l.far_hit, 354u);
  EXPECT_EQ(l.near_copy, 177u);  // die 0's half kept a copy
  EXPECT_EQ(l.far_miss, 177u);   // B's home is die 0: CTA 0's own half, filled from die 0's HBM
  EXPECT_EQ(l.home_hit, 354u);   // ... so for CTA 2 it is a far hit
  EXPECT_EQ(l.run.memory.d2d_bytes, 2u * 4096);
  EXPECT_EQ(l.run.memory.hbm_read_bytes, 2u * 4096);  // A once (die 1), B once (die 0)
  EXPECT_EQ(l.run.memory.l2_hit_bytes, 3u * 4096);
}

// dies.far_hit_latency (the Hopper configs' promoted-box row) comes after the box has streamed in
// (its last lines are far ones), and only where the far half held lines the near one lacked. With
// no link latency: far hit 1 + 2 + max(64-cycle stream + 50, 41 on the link) + 100 + 10 = 227; the
// near copy and the miss in the reader's own half stay at 177.
TEST(DieTest, AFarHalfHitPaysTheFarHitLatencyAfterItsStream) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml",
                                         {"sm.gpcs=2", "dies.count=2", "dies.link_latency=0", "dies.far_hit_latency=50"});
  const FarHalfLoads l = far_half_loads(cfg);
  EXPECT_EQ(l.far_hit, 227u);
  EXPECT_EQ(l.near_copy, 177u);
  EXPECT_EQ(l.far_miss, 177u);
  EXPECT_EQ(l.home_hit, 227u);
  // Behind a busier link the latency hides: at 20 B/cycle the crossing takes 205 cycles.
  const HardwareConfig slow = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml",
                                          {"sm.gpcs=2", "dies.count=2", "dies.link_latency=0", "dies.far_hit_latency=50",
                                           "dies.link_gbytes_per_second=20"});
  EXPECT_EQ(far_half_loads(slow).far_hit, 1u + 2 + 205 + 100 + 10);
}

// dies.promotion_request_share: a far read whose map's L2 promotion is wider than a line (256B here)
// also puts that share of its bytes on the link the other way, towards the serving half, and does
// not wait for them: the two far reads (4096 bytes each) cross 8192 bytes of data and, at 0.5,
// 4096 bytes back, and each still takes 354 cycles; with a line's promotion (128B) nothing goes back.
TEST(DieTest, AFarReadWithAWidePromotionSendsItsShareBackAcrossWithoutWaitingForIt) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml",
                                         {"sm.gpcs=2", "dies.count=2", "dies.promotion_request_share=0.5"});
  const FarHalfLoads wide = far_half_loads(cfg, L2Promotion::B256);
  EXPECT_EQ(wide.run.memory.d2d_bytes, 2u * 4096 + 2u * 2048);
  EXPECT_EQ(wide.far_hit, 354u);
  EXPECT_EQ(wide.home_hit, 354u);
  EXPECT_EQ(wide.near_copy, 177u);  // a near read sends nothing
  const FarHalfLoads line = far_half_loads(cfg, L2Promotion::B128);
  EXPECT_EQ(line.run.memory.d2d_bytes, 2u * 4096);
  EXPECT_EQ(line.far_hit, 354u);
}

// A store by an SM of the other die than the box's home crosses the link; one of the home die's
// does not.
TEST(DieTest, AStoreGoesToTheHomeHalf) {
  const HardwareConfig& cfg = two_die_config();
  Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = sim.gmem().alloc(4096),
                                          .dims = {128, 32}, .strides = {128}, .box = {128, 32},
                                          .swizzle = Swizzle::B128});
  const RunResult r = sim.launch(
      "store", LaunchConfig{.grid_ctas = 3, .block_threads = 32, .dynamic_smem_bytes = 8192}, [&](Warp& w) -> Task {
        if (w.cta_idx() == 1) co_return;
        w.tma_store(map, SmemAddr{1024}, {0, 0});
        w.bulk_commit_group();
        co_await w.bulk_wait_group(0);
      });
  EXPECT_EQ(r.memory.l2_write_bytes, 2u * 4096);
  EXPECT_EQ(r.memory.d2d_bytes, 4096u);  // CTA 0's (die 0); CTA 2 is on the home die
}

// Every SM streams new data: the half of it homed on the other die crosses the link, which at
// 1000 GB/s each way is slower than the far share of either die's HBM stacks (3630 GB/s x 1/2), so
// the stream runs at the link's rate in both directions and the critical line names it.
TEST(DieTest, ADieToDieBoundStreamAchievesTheLinksBandwidth) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml", {"dies.link_gbytes_per_second=1000"});
  const TmaStreamResult r = run_tma_stream(cfg, SimOptions{.mode = Mode::Timing}, TmaStreamParams{});
  const double per_direction = static_cast<double>(r.run.memory.d2d_bytes) / 2 / static_cast<double>(r.run.cycles);
  EXPECT_NEAR(per_direction / (1000 / cfg.clock_ghz), 1.0, 0.02) << per_direction << " B/cycle each way";
  EXPECT_NEAR(static_cast<double>(r.run.memory.d2d_bytes) / static_cast<double>(r.bytes), 0.5, 0.02);

  const test::Outcome o = test::bwsim("run tma_stream --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/b200.yaml --set dies.link_gbytes_per_second=1000 --loads 64");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("(die-to-die-bandwidth-bound)"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace bwsim
