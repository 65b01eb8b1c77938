// The memory system (L2 bandwidth, HBM bandwidth and latency), the tile scheduler
// that decides L2 reuse, and the CUDA-core pipes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>

#include "TestSupport.hpp"
#include "bwsim/kernels/Gemm.hpp"
#include "bwsim/kernels/TileScheduler.hpp"
#include "bwsim/kernels/TmaStream.hpp"

namespace bwsim {
namespace {

TEST(TileSchedulerTest, RasterAndSwizzleOrderTheTilesAsTheHandTable) {
  // 4 x 3 tiles along M with swizzle 2: bands of 2 n-columns, m moving fastest within the band.
  const auto s = tile_schedulers().at("static_persistent").make(TileGrid{4, 3, Raster::AlongM, 2});
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expect{
      {0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}, {0, 2}, {1, 2}, {2, 2}, {3, 2}};
  for (std::uint32_t t = 0; t < s->tiles(); ++t) EXPECT_EQ(s->tile(t), expect[t]) << t;
  // Along N, swizzle 1: n fastest.
  const StaticPersistentScheduler n{TileGrid{2, 3, Raster::AlongN, 1}};
  EXPECT_EQ(n.tile(0), (std::pair<std::uint32_t, std::uint32_t>{0, 0}));
  EXPECT_EQ(n.tile(2), (std::pair<std::uint32_t, std::uint32_t>{0, 2}));
  EXPECT_EQ(n.tile(3), (std::pair<std::uint32_t, std::uint32_t>{1, 0}));
  // Worker 2 of 5 takes units 2, 7, 12 (past the 12 tiles: done).
  EXPECT_EQ(s->work_unit(2, 5, 0), 2u);
  EXPECT_EQ(s->work_unit(2, 5, 1), 7u);
  EXPECT_GE(s->work_unit(2, 5, 2), s->tiles());
}

TEST(TileSchedulerTest, AnUnknownSchedulerIsBadInputListingTheValidOnes) {
  test::expect_bad_input("run gemm_persistent --m 256 --n 256 --k 256 --tile-scheduler stream_k",
                         "--tile-scheduler: unknown model 'stream_k'; the valid names are static_persistent");
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --tile-scheduler dynamic",
                         "the valid names are static_persistent");
}

// One warp loads a 4 KiB box twice, one after the other, on the unit-test machine with a 500-cycle
// HBM latency: the first load misses in the L2, the second hits.
// GMEM buffers as cudaMalloc places them (h200_alloc_alignment.csv): with 2 MiB pages a buffer of
// a page or more starts on one, a smaller one follows the last buffer 256 bytes on; without pages
// (the B200's config) every buffer follows the last. The gap between buffers is no buffer's.
TEST(GlobalMemoryTest, BuffersOfAPageOrMoreStartOnAPage) {
  constexpr std::uint64_t kPage = 2097152;
  GlobalMemory paged(false, kPage), packed(false);
  const GmemAddr small = paged.alloc(5000), big = paged.alloc(3 * kPage), almost = paged.alloc(kPage - 1),
                 exact = paged.alloc(kPage);
  EXPECT_EQ(small.value % kPage, 0u);  // the first buffer, at the base
  EXPECT_EQ(big.value % kPage, 0u);
  EXPECT_EQ(big.value, small.value + kPage);
  EXPECT_EQ(almost.value, big.value + 3 * kPage + 256);  // under a page: packed
  EXPECT_EQ(exact.value % kPage, 0u);
  EXPECT_EQ(exact.value, almost.value + 2 * kPage - 256);
  EXPECT_FALSE(paged.contains(GmemAddr{small.value + 5120}, 1));
  const GmemAddr a = packed.alloc(5000), b = packed.alloc(3 * kPage);
  EXPECT_EQ(b.value, a.value + 5120 + 256);
}

TEST(MemorySystemTest, AMissPaysTheHbmLatencyAndTheSameBoxThenHits) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"hbm.latency=500"});
  Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
  const GmemAddr a = sim.gmem().alloc(4096);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = a, .dims = {128, 32}, .strides = {128},
                                          .box = {128, 32}, .swizzle = Swizzle::B128});
  Cycle first = 0, second = 0;
  const RunResult r = sim.launch(
      "l2", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 8192}, [&](Warp& w) -> Task {
        const MBarrierRef bar{0};
        w.mbarrier_init(bar, 1);                  // cycle 0
        w.mbarrier_arrive_expect_tx(bar, 4096);   // 1
        w.tma_load(map, SmemAddr{1024}, bar, {0, 0});  // 2, reaches the unit at 4
        co_await w.mbarrier_wait(bar, 0);
        first = w.now();
        w.mbarrier_arrive_expect_tx(bar, 4096);
        const Cycle issue = w.now();
        w.tma_load(map, SmemAddr{1024}, bar, {0, 0});
        co_await w.mbarrier_wait(bar, 1);
        second = w.now() - issue;
      });
  // Miss: the unit streams 4 .. 68; the bytes reach the L2 500 after the request and stream in at
  // the miss rate (64 B/cycle here): 4 + 500 + 64 = 568; + load latency 100, + wakeup 10 = 678.
  // Hit: issue 2 + stream 64 + 100 + 10 = 176 after the issue.
  EXPECT_EQ(first, 678u);
  EXPECT_EQ(second, 176u);
  EXPECT_EQ(r.memory.l2_read_bytes, 8192u);
  EXPECT_EQ(r.memory.l2_hit_bytes, 4096u);
  EXPECT_EQ(r.memory.hbm_read_bytes, 4096u);
}

// CTAs that each load the same 4 KiB box (hbm.latency 500, the coalescer on, `overrides` beside),
// CTA i after sleeping delays[i] cycles: the cycle each passed its wait, and the run's coalesced
// and HBM bytes. A CTA that does not sleep initializes its barrier at cycle 0, arrives at 1 and
// issues the load, which reaches the unit at 4 (one that sleeps D cycles: 4 + D).
struct SameBoxLoads {
  std::vector<Cycle> woke;
  std::uint64_t coalesced = 0, hbm = 0;
};
SameBoxLoads load_one_box(std::vector<std::string> overrides, const std::vector<Cycle>& delays) {
  overrides.insert(overrides.end(), {"hbm.latency=500", "l2.coalesce_in_flight=true"});
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", overrides);
  Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = sim.gmem().alloc(4096), .dims = {128, 32},
                                          .strides = {128}, .box = {128, 32}, .swizzle = Swizzle::B128});
  SameBoxLoads o;
  o.woke.resize(delays.size());
  const RunResult r = sim.launch(
      "join", LaunchConfig{.grid_ctas = static_cast<std::uint32_t>(delays.size()), .block_threads = 32,
                           .dynamic_smem_bytes = 8192},
      [&](Warp& w) -> Task {
        const MBarrierRef bar{0};
        w.mbarrier_init(bar, 1);
        if (const Cycle d = delays[w.cta_idx()]) co_await w.sleep(d);
        w.mbarrier_arrive_expect_tx(bar, 4096);
        w.tma_load(map, SmemAddr{1024}, bar, {0, 0});
        co_await w.mbarrier_wait(bar, 0);
        o.woke[w.cta_idx()] = w.now();
      });
  o.coalesced = r.memory.l2_coalesced_bytes;
  o.hbm = r.memory.hbm_read_bytes;
  return o;
}

// CTA 0 (SM 0) loads a 4 KiB box that misses (hbm.latency 500): its request reaches the L2 at
// cycle 4 and its data is in the L2 at 505 (the latency and a cycle at the HBM link: the transfer
// waited 501 cycles). CTA 1 (SM 1) loads the same box with its request at 204, while that fill is
// in flight. Within the join window (l2.join_window_cycles, plus l2.join_queue_share of the 501
// cycles the fill waited) it joins the transfer: no array read, its bytes counted as coalesced.
// Past the window it is read out of the arrays, but not before the fill it waits for: its data is
// ready at 505 either way, so it streams 204 .. 268 and completes at 505 + load latency 100, its
// waiter waking 10 later and passing the wait at 615 (a plain hit: 268 + 100 + 11 = 379).
TEST(MemorySystemTest, AReadJoinsAnotherSmsTransferWithinTheJoinWindowAndOtherwiseWaitsForItsFill) {
  auto run = [](std::vector<std::string> overrides) { return load_one_box(std::move(overrides), {0, 200}); };
  // Joinable while in flight (no window): joins.
  const SameBoxLoads whole = run({});
  EXPECT_EQ(whole.woke[1], 615u);
  EXPECT_EQ(whole.coalesced, 4096u);
  // Window 300: until 4 + 300 = 304 > 204, joins.
  const SameBoxLoads wide = run({"l2.join_window_cycles=300"});
  EXPECT_EQ(wide.woke[1], 615u);
  EXPECT_EQ(wide.coalesced, 4096u);
  // Window 50: until 54, past; read out of the arrays after the fill (ready 505, not 204).
  const SameBoxLoads narrow = run({"l2.join_window_cycles=50"});
  EXPECT_EQ(narrow.woke[1], 615u);
  EXPECT_EQ(narrow.coalesced, 0u);
  // Window 50 plus 0.4 of the fill's 501-cycle wait: until 4 + 50 + 200.4 = 254.4, joins.
  const SameBoxLoads loaded = run({"l2.join_window_cycles=50", "l2.join_queue_share=0.4"});
  EXPECT_EQ(loaded.woke[1], 615u);
  EXPECT_EQ(loaded.coalesced, 4096u);
  // The box came from HBM once in every case.
  for (const SameBoxLoads& o : {whole, wide, narrow, loaded}) EXPECT_EQ(o.hbm, 4096u);
}

// Two GPCs of one TPC each (sm.gpcs 2: SMs 0-1 and 2-3). CTA 0 (SM 0) misses the box at cycle 4
// (fill in at 505, as above); CTA 1 (SM 2, the other GPC) reads it at 104 and CTA 2 (SM 1, CTA 0's
// GPC) at 204, both while the fill is in flight. Any SM's transfer joinable (join_scope chip):
// both join CTA 0's, 8192 bytes coalesced. Within a GPC (gpc): CTA 1 finds no transfer to its
// GPC, waits for the fill and is read out of the arrays; CTA 2 joins CTA 0's although CTA 1's read
// came between (the table keeps each GPC's last transfer). Every waiter passes at 505 + load
// latency 100 + wakeup 10 = 615 (CTA 1 served as a plain hit would pass at 104 + 64 + 100 + 11 = 279).
TEST(MemorySystemTest, WithinAGpcAReadJoinsOnlyItsGpcsTransferAndOtherwiseWaitsForTheFill) {
  auto run = [](const std::string& scope) {
    return load_one_box({"sm.gpcs=2", "l2.join_scope=" + scope}, {0, 100, 200});
  };
  const SameBoxLoads chip = run("chip"), gpc = run("gpc");
  EXPECT_EQ(chip.coalesced, 8192u);
  EXPECT_EQ(gpc.coalesced, 4096u);
  for (const SameBoxLoads& o : {chip, gpc}) {
    EXPECT_EQ(o.woke[1], 615u);
    EXPECT_EQ(o.woke[2], 615u);
    EXPECT_EQ(o.hbm, 4096u);
  }
}

TEST(MemorySystemTest, AJoinWindowNeedsTheCoalescerAndAQueueShareNeedsAWindow) {
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR
                         "/sim_configs/h100.yaml --set l2.coalesce_in_flight=false --set l2.join_window_cycles=110",
                         "l2.join_window_cycles: a join window needs l2.coalesce_in_flight: true");
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR
                         "/sim_configs/h100.yaml --set l2.join_window_cycles=0 --set l2.join_queue_share=0.2",
                         "l2.join_queue_share: a queue share widens a join window: it needs l2.join_window_cycles");
}

TEST(MemorySystemTest, AJoinScopeIsChipOrGpcAndGpcNeedsTheCoalescer) {
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --set l2.join_scope=tpc",
                         "l2.join_scope: 'tpc' is not chip (a read joins any SM's transfer) or gpc (its GPC's)");
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR
                         "/sim_configs/h100.yaml --set l2.coalesce_in_flight=false --set l2.join_window_cycles=0 "
                         "--set l2.join_queue_share=0 --set l2.join_scope=gpc",
                         "l2.join_scope: joining within a GPC needs l2.coalesce_in_flight: true");
}

// Two 4 KiB boxes that both miss, issued back to back by one warp (hbm.latency 500): the second
// streams 68 .. 132 and its missed bytes are in at 68 + 500 + 64 = 632, but with
// tma.miss_box_cycles 1000 not before the first's (4 + 500 + 64 = 568) + 1000 = 1568 (our H100
// rows: one SM's missing boxes complete one per ~400 cycles, 16 and 32 KiB alike). The phase
// completes at 1568 + load latency 100, the waiter wakes 10 later; without the rule at 632 + 110.
TEST(MemorySystemTest, OneSmsBoxesWithMissesCompleteAtMostOnePerMissBoxInterval) {
  for (const Cycle interval : {1000u, 0u}) {
    const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml",
                                           {"hbm.latency=500", fmt::format("tma.miss_box_cycles={}", interval)});
    Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
    const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = sim.gmem().alloc(8192),
                                            .dims = {128, 64}, .strides = {128}, .box = {128, 32},
                                            .swizzle = Swizzle::B128});
    Cycle done = 0;
    sim.launch("misses", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 16384},
               [&](Warp& w) -> Task {
                 const MBarrierRef bar{0};
                 w.mbarrier_init(bar, 1);                        // 0
                 w.mbarrier_arrive_expect_tx(bar, 8192);         // 1
                 w.tma_load(map, SmemAddr{1024}, bar, {0, 0});   // 2, streams 4 .. 68
                 w.tma_load(map, SmemAddr{5120}, bar, {0, 32});  // 3, streams 68 .. 132
                 co_await w.mbarrier_wait(bar, 0);
                 done = w.now();
               });
    EXPECT_EQ(done, interval ? 1678u : 742u) << interval;
  }
}

// A request reaches the L2 (and the HBM behind it) when the TMA unit starts streaming it, not when
// it was issued: the links serve requests in the order they arrive there. HBM at 64 B/cycle, no
// latency (unit-test machine); every box 4 KiB and a miss, streamed in at 64 B/cycle. CTA 0 issues
// A at 2 and B at 4 (a tma_load issues in 2 cycles): A streams 4 .. 68 and takes the HBM 4 .. 68; B
// waits for the unit and starts at 68. CTA 1, on another SM, issues C at 20 (unit 22 .. 86), which
// reaches the HBM at 22, before B: C takes it 68 .. 132 and B 132 .. 196. C lands at 132 + load
// latency 100 = 232 and its waiter wakes at 242; CTA 0's phase needs A (68 + 100) and B (196 + 100
// = 296) and wakes at 306. (Had B taken its place at its
// issue, it would have gone first and the two SMs' times would be swapped: 242 and 306.)
TEST(MemorySystemTest, ATmaRequestTakesItsPlaceAtTheLinksWhenTheUnitStartsIt) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"hbm.gbytes_per_second=64"});
  Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = sim.gmem().alloc(3 * 4096),
                                          .dims = {128, 96}, .strides = {128}, .box = {128, 32},
                                          .swizzle = Swizzle::B128});
  std::array<Cycle, 2> woke{};
  sim.launch("turns", LaunchConfig{.grid_ctas = 2, .block_threads = 32, .dynamic_smem_bytes = 16384},
             [&](Warp& w) -> Task {
               const MBarrierRef bar{0};
               w.mbarrier_init(bar, 1);  // 0
               if (w.cta_idx() == 0) {
                 w.mbarrier_arrive_expect_tx(bar, 8192);         // 1
                 w.tma_load(map, SmemAddr{1024}, bar, {0, 0});   // 2: A
                 w.tma_load(map, SmemAddr{5120}, bar, {0, 32});  // 4: B
               } else {
                 co_await w.sleep(18);                           // 1 .. 19
                 w.mbarrier_arrive_expect_tx(bar, 4096);         // 19
                 w.tma_load(map, SmemAddr{1024}, bar, {0, 64});  // 20: C
               }
               co_await w.mbarrier_wait(bar, 0);
               woke[w.cta_idx()] = w.now();
             });
  EXPECT_EQ(woke[0], 306u);
  EXPECT_EQ(woke[1], 242u);
}

// cuTensorMapEncodeTiled's L2 promotion: with 256B, a miss of a 128-byte-wide box on rows 1 KiB
// apart fetches each row's neighbouring line too, so the next box along the rows hits (as
// tools/calibration/h100_hbm_boxes.csv shows: 1118 cycles per load with 256B against 1415 with
// 128B); with 128B (one line) every box misses.
TEST(MemorySystemTest, TheL2PromotionFetchesTheNeighbouringLinesSoTheNextBoxHits) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"hbm.latency=500"});
  for (const L2Promotion promotion : {L2Promotion::B256, L2Promotion::B128}) {
    Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
    const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = sim.gmem().alloc(32 * 1024),
                                            .dims = {256, 32}, .strides = {1024}, .box = {128, 32},
                                            .swizzle = Swizzle::B128, .l2_promotion = promotion});
    Cycle second = 0;
    const RunResult r = sim.launch(
        "l2", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 8192}, [&](Warp& w) -> Task {
          const MBarrierRef bar{0};
          w.mbarrier_init(bar, 1);
          w.mbarrier_arrive_expect_tx(bar, 4096);
          w.tma_load(map, SmemAddr{1024}, bar, {0, 0});
          co_await w.mbarrier_wait(bar, 0);
          w.mbarrier_arrive_expect_tx(bar, 4096);
          const Cycle issue = w.now();
          w.tma_load(map, SmemAddr{1024}, bar, {128, 0});  // the next 128 bytes of every row
          co_await w.mbarrier_wait(bar, 1);
          second = w.now() - issue;
        });
    const bool promoted = promotion == L2Promotion::B256;
    EXPECT_EQ(r.memory.hbm_read_bytes, 8192u);  // both lines of every row, in one fetch or two
    EXPECT_EQ(r.memory.l2_hit_bytes, promoted ? 4096u : 0u);
    if (promoted) EXPECT_EQ(second, 176u);  // the hit of the test above: issue 2 + stream 64 + 100 + 10
    else EXPECT_GT(second, 500u);           // a second miss
  }
}

// l2.block_rows sets the rows of a residency block: at 16 (b200.yaml), a box of rows 0-7 brings
// in the block of rows 0-15, so the box of rows 8-15 after it hits; at 8 it misses.
TEST(MemorySystemTest, TheResidencyBlockHeightIsTheConfigs) {
  for (const std::uint32_t block_rows : {8u, 16u}) {
    const HardwareConfig cfg =
        load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {fmt::format("l2.block_rows={}", block_rows)});
    Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
    const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = sim.gmem().alloc(128 * 1024),
                                            .dims = {128, 32}, .strides = {4096}, .box = {128, 8},
                                            .swizzle = Swizzle::B128});
    const RunResult r = sim.launch(
        "l2", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 8192}, [&](Warp& w) -> Task {
          const MBarrierRef bar{0};
          w.mbarrier_init(bar, 1);
          for (std::uint32_t i = 0; i < 2; ++i) {
            w.mbarrier_arrive_expect_tx(bar, 1024);
            w.tma_load(map, SmemAddr{1024}, bar, {0, static_cast<std::int32_t>(8 * i)});
            co_await w.mbarrier_wait(bar, i);
          }
        });
    EXPECT_EQ(r.memory.l2_hit_bytes, block_rows == 16 ? 1024u : 0u) << block_rows;
    EXPECT_EQ(r.memory.hbm_read_bytes, block_rows == 16 ? 1024u : 2048u) << block_rows;
  }
}

TEST(MemorySystemTest, StreamingNewDataOnEverySmAchievesTheConfiguredHbmBandwidth) {
  const HardwareConfig& cfg = test::b200_config();
  const TmaStreamResult r = run_tma_stream(cfg, SimOptions{.mode = Mode::Timing}, TmaStreamParams{});
  const double configured = cfg.hbm.gbytes_per_second / cfg.clock_ghz;  // bytes per cycle
  EXPECT_NEAR(r.bytes_per_cycle / configured, 1.0, 0.02) << r.bytes_per_cycle << " B/cycle";
  EXPECT_EQ(r.run.memory.hbm_read_bytes, r.bytes);
  EXPECT_EQ(r.run.memory.l2_hit_bytes, 0u);
}

// Each SM cycles through its own region: after the first pass (from HBM, about 1% of the run)
// every load hits in its die's half, and the two halves together give the configured rate.
TEST(MemorySystemTest, StreamingAnL2ResidentRegionAchievesTheConfiguredL2Bandwidth) {
  const HardwareConfig& cfg = test::b200_config();
  const TmaStreamResult r = run_tma_stream(cfg, SimOptions{.mode = Mode::Timing},
                                           TmaStreamParams{.loads = 2048, .region_bytes = 256 * 1024});
  EXPECT_NEAR(r.bytes_per_cycle / (cfg.l2.gbytes_per_second / cfg.clock_ghz), 1.0, 0.02) << r.bytes_per_cycle << " B/cycle";
  EXPECT_GT(r.run.memory.l2_hit_rate(), 0.98);
}

TEST(MemorySystemTest, AMulticastLoadIsReadFromTheL2Once) {
  GemmParams p{.m = 256, .n = 512, .k = 128, .ctas = 4, .cluster_m = 2, .cluster_n = 2};
  const GemmResult r = run_gemm(test::b200_config(), SimOptions{.mode = Mode::Timing}, p, false);
  EXPECT_EQ(r.run.memory.l2_read_bytes, r.run.tma.load_bytes);
  EXPECT_EQ(r.run.tma.delivered_bytes, 2 * r.run.tma.load_bytes);  // every piece lands in 2 CTAs
  // Every operand byte is read from HBM exactly once: A 256 x 128 and B 512 x 128 bf16.
  EXPECT_EQ(r.run.memory.hbm_read_bytes, (256u + 512u) * 128 * 2);
}

// Warps 0 and 4 share sub-partition 0, warp 1 has its own. 10 conversions each on the unit-test
// machine's 64-lane cvt pipe (16 lanes per sub-partition: 2 cycles per warp instruction).
TEST(CorePipeTest, WarpsOfOneSubPartitionShareItsPipe) {
  Cycle end[5] = {};
  test::run_cta(
      [&](Warp& w) -> Task {
        if (w.warp_idx() == 0 || w.warp_idx() == 1 || w.warp_idx() == 4) w.execute(CorePipe::Cvt, 10);
        end[w.warp_idx()] = w.now();
        co_return;
      },
      160);
  EXPECT_EQ(end[0], 19u);  // 10 instructions 2 cycles apart: the last issues at 18, done issuing at 19
  EXPECT_EQ(end[1], 19u);  // its own sub-partition: no contention
  EXPECT_EQ(end[4], 39u);  // behind warp 0's 20 cycles on sub-partition 0
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

TEST(MemorySystemTest, TheCriticalLineNamesTheSaturatedLink) {
  const test::Outcome o =
      test::bwsim("run tma_stream --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --loads 64");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("(HBM-bandwidth-bound)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find(" 296.00 MiB,"), std::string::npos) << "64 loads of 32 KiB on 148 SMs\n" << o.output;
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

TEST(MemorySystemTest, TheTraceHasChipWideBandwidthCounters) {
  const std::string path = ::testing::TempDir() + "stream.trace.json";
  const test::Outcome o = test::bwsim("run tma_stream --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/b200.yaml --loads 64 --trace " + path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json trace = nlohmann::json::parse(std::ifstream(path));
  double hbm_max = 0;
  bool named = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["pid"] != 148) continue;  // the chip's process comes after the 148 SMs
    if (e["ph"] == "M" && e["args"].contains("name")) named |= e["args"]["name"] == "L2 and HBM (chip)";
    if (e["ph"] == "C" && e["name"] == "HBM GB/s") hbm_max = std::max(hbm_max, e["args"]["value"].get<double>());
  }
  EXPECT_TRUE(named);
  // The HBM link runs at its configured rate while the stream saturates it, never above (but for
  // deliveries bucketed at whole cycles: 1%).
  EXPECT_GT(hbm_max, 0.95 * 7260);
  EXPECT_LE(hbm_max, 7260 * 1.01);
}

}  // namespace
}  // namespace bwsim
