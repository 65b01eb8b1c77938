// Clusters on unit_test.yaml (16 SMs): launch limits and placement, barrier.cluster, remote
// arrives and DSMEM with their configured latencies, TMA multicast and cta_group::2 loads,
// tcgen05 cta_group::2 (pair allocation, MMA, misuse) and multicast commit.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {
namespace {

using test::run_clusters;

constexpr MBarrierRef kBar{8};
constexpr SmemAddr kSlot{0};
constexpr SmemAddr kData{1024};

using test::expect_misuse;

// ---------------------------------------------------------------------------------- launch

TEST(ClusterLaunchTest, LimitsAreInputErrors) {
  auto launch = [](ClusterShape c, std::uint32_t grid, bool non_portable) {
    Simulator sim(test::unit_config_16sm(), {});
    sim.launch("k", LaunchConfig{.grid_ctas = grid, .block_threads = 32, .cluster = c, .non_portable_cluster = non_portable},
               [](Warp&) -> Task { co_return; });
  };
  EXPECT_THROW(launch({3, 3, 1}, 9, false), InputError);   // 9 > portable 8 without the opt-in
  EXPECT_NO_THROW(launch({4, 4, 1}, 16, true));            // 16 with it
  EXPECT_THROW(launch({17, 1, 1}, 17, true), InputError);  // beyond cluster.max_ctas
  try {
    launch({2, 1, 1}, 5, false);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of the cluster size 2"), std::string::npos) << e.what();
  }
}

TEST(ClusterLaunchTest, RanksCoordinatesAndPairsOnOneTpc) {
  std::vector<std::array<std::uint32_t, 6>> seen(16);
  run_clusters(
      [&](Warp& w) -> Task {
        const auto c = w.cluster_cta_coord();
        seen[w.cta_idx()] = {w.cluster_idx(), w.cluster_ctarank(), c[0], c[1], w.sm_idx(), w.cluster_nctarank()};
        co_return;
      },
      {2, 2, 1}, 16);
  for (std::uint32_t cta = 0; cta < 16; ++cta) {
    EXPECT_EQ(seen[cta][0], cta / 4);
    EXPECT_EQ(seen[cta][1], cta % 4);
    EXPECT_EQ(seen[cta][2], cta % 2);        // x fastest
    EXPECT_EQ(seen[cta][3], (cta % 4) / 2);
    EXPECT_EQ(seen[cta][4] / 2, (cta / 2) % 8);  // ranks 2i, 2i+1 share a TPC (SMs 2t, 2t+1)
    EXPECT_EQ(seen[cta][5], 4u);
  }
}

// ---------------------------------------------------------------------------------- barrier.cluster

TEST(ClusterBarrierTest, WaitersResumeBarrierLatencyAfterTheLastArrival) {
  // Two CTAs x 2 warps; warp 1 of rank 1 arrives last, at cycle 100: relaxed, everyone resumes
  // at 100 + 20; with .release the last arrival is ready 200 later.
  for (bool relaxed : {true, false}) {
    std::vector<Cycle> resumed;
    run_clusters(
        [&](Warp& w) -> Task {
          if (w.cluster_ctarank() == 1 && w.warp_idx() == 1) co_await w.sleep(100 - w.now());
          const Cycle t = w.now();
          if (relaxed) w.cluster_arrive_relaxed(); else w.cluster_arrive();
          co_await w.cluster_wait();
          if (w.cluster_ctarank() == 1 && w.warp_idx() == 1) {
            EXPECT_EQ(t, 100u);
          }
          resumed.push_back(w.now());
        },
        {2, 1, 1}, 2, 64);
    ASSERT_EQ(resumed.size(), 4u);
    for (Cycle c : resumed) EXPECT_EQ(c, relaxed ? 120u : 320u);
  }
}

TEST(ClusterBarrierTest, ExitedWarpsDoNotHoldItAndMisuseIsReported) {
  Cycle resumed = 0;
  run_clusters(
      [&](Warp& w) -> Task {
        if (w.cluster_ctarank() == 1) co_return;  // rank 1 exits without arriving
        w.cluster_arrive_relaxed();
        co_await w.cluster_wait();
        resumed = w.now();
      },
      {2, 1, 1}, 2);
  EXPECT_EQ(resumed, 20u);  // arrives at 0, +20
  expect_misuse([] { run_clusters([](Warp& w) -> Task { co_await w.cluster_wait(); }, {2, 1, 1}, 2); },
                Rule::ClusterBarrierMisuse);
  expect_misuse(
      [] {
        run_clusters(
            [](Warp& w) -> Task {
              w.cluster_arrive_relaxed();
              w.cluster_arrive_relaxed();
              co_return;
            },
            {2, 1, 1}, 2);
      },
      Rule::ClusterBarrierMisuse);
}

// ---------------------------------------------------------------------------------- DSMEM

TEST(DsmemTest, RemoteArriveAndDsmemLoadTakeTheConfiguredLatency) {
  // Rank 1 stores a value into rank 0's SMEM and arrives remotely at cycle t: the arrival lands
  // at t + 50 (remote_arrive_latency), rank 0 resumes 10 (wakeup) later. Rank 0 then reads rank
  // 1's SMEM: the value is there 60 (dsmem_load_latency) after the load issues.
  Cycle arrive_at = 0, woke_at = 0, load_issue = 0, load_done = 0;
  std::uint32_t got = 0, loaded = 0;
  run_clusters(
      [&](Warp& w) -> Task {
        if (w.cluster_ctarank() == 0) {
          w.mbarrier_init(kBar, 1);
          w.fence_mbarrier_init();  // the relaxed cluster arrive below does not release the init
        }
        const std::uint32_t mine = 0xC0DE0000u + w.cluster_ctarank();
        w.st_shared(kData, std::as_bytes(std::span<const std::uint32_t>(&mine, 1)));
        w.cluster_arrive_relaxed();
        co_await w.cluster_wait();
        if (w.cluster_ctarank() == 1) {
          const std::uint32_t v = 1234;
          w.st_shared_cluster(w.mapa(kData + 64, 0), std::as_bytes(std::span<const std::uint32_t>(&v, 1)));
          const ClusterBarrierRef remote = w.mapa(kBar, 0);
          arrive_at = w.now();
          w.mbarrier_arrive(remote);
        } else {
          co_await w.mbarrier_wait(kBar, 0);
          woke_at = w.now();
          got = w.ld_shared_u32(kData + 64);
          const ClusterSmemAddr remote = w.mapa(kData, 1);
          load_issue = w.now();
          w.ld_shared_cluster(remote, std::as_writable_bytes(std::span<std::uint32_t>(&loaded, 1)));
          load_done = w.now();
        }
        w.cluster_arrive_relaxed();  // rank 1 stays resident while rank 0 reads its SMEM
        co_await w.cluster_wait();
      },
      {2, 1, 1}, 2);
  EXPECT_EQ(woke_at, arrive_at + 50 + 10);
  EXPECT_EQ(got, 1234u);
  EXPECT_EQ(loaded, 0xC0DE0001u);
  EXPECT_EQ(load_done, load_issue + 60);
}

TEST(DsmemTest, APeersBarrierIsUsableOnlyOnceItsInitIsPublishedToTheCluster) {
  // Rank 1 arrives on rank 0's barrier. Legal after init + fence.mbarrier_init + a relaxed
  // cluster barrier, or init + a (release) cluster barrier; not after a relaxed one without the
  // fence, nor with no cluster barrier at all.
  auto program = [](bool fence, bool sync, bool release) {
    return [=](Warp& w) -> Task {
      if (w.cluster_ctarank() == 0) {
        w.mbarrier_init(kBar, 1, "flag");
        if (fence) w.fence_mbarrier_init();
      }
      if (sync) {
        if (release) w.cluster_arrive(); else w.cluster_arrive_relaxed();
        co_await w.cluster_wait();
      } else {
        co_await w.sleep(100);
      }
      if (w.cluster_ctarank() == 1) w.mbarrier_arrive(w.mapa(kBar, 0));
      else co_await w.mbarrier_wait(kBar, 0);
    };
  };
  EXPECT_NO_THROW(run_clusters(program(true, true, false), {2, 1, 1}, 2));
  EXPECT_NO_THROW(run_clusters(program(false, true, true), {2, 1, 1}, 2));
  const MisuseError e =
      expect_misuse([&] { run_clusters(program(false, true, false), {2, 1, 1}, 2); }, Rule::BarrierUninitialized);
  EXPECT_NE(std::string(e.what()).find("'flag' (rank 0 smem 0x8)"), std::string::npos) << e.what();
  expect_misuse([&] { run_clusters(program(true, false, false), {2, 1, 1}, 2); }, Rule::BarrierUninitialized);
}

TEST(DsmemTest, StoredBytesLandAfterTheStoreLatency) {
  // Rank 1 stores at cycle 100; the bytes are in rank 0's SMEM at 130 (dsmem_store_latency 30).
  std::uint32_t before = 1, after = 0;
  run_clusters(
      [&](Warp& w) -> Task {
        if (w.cluster_ctarank() == 1) {
          const ClusterSmemAddr dst = w.mapa(kData, 0);
          co_await w.sleep(100 - w.now());
          const std::uint32_t v = 77;
          w.st_shared_cluster(dst, std::as_bytes(std::span<const std::uint32_t>(&v, 1)));
        } else {
          co_await w.sleep(129 - w.now());
          before = w.ld_shared_u32(kData);
          co_await w.sleep(130 - w.now());
          after = w.ld_shared_u32(kData);
        }
        w.cluster_arrive_relaxed();
        co_await w.cluster_wait();
      },
      {2, 1, 1}, 2);
  EXPECT_EQ(before, 0u);
  EXPECT_EQ(after, 77u);
}

// cp.async.bulk.shared::cluster: rank 1 copies 256 bytes of its SMEM to rank 0, issued at cycle
// `issued` (after the cluster barrier): the SMEM read takes 256 / 128 = 2 cycles, the bytes land
// dsmem_store_latency (30) later with complete_tx on rank 0's barrier; its waiter wakes 10 later. `mistake`: 1 no
// fence.proxy.async after the generic writes of the source, 2 rank 0 reads the bytes without
// waiting for the barrier, 3 the barrier named in the wrong CTA.
void bulk_copy(int mistake, Cycle* woke = nullptr, std::uint32_t* got = nullptr, Cycle* issued = nullptr) {
  run_clusters(
      [=](Warp& w) -> Task {
        if (w.cluster_ctarank() == 0) {
          w.mbarrier_init(kBar, 1, "copied");
          w.fence_mbarrier_init();
        }
        w.cluster_arrive();
        co_await w.cluster_wait();
        if (w.cluster_ctarank() == 1) {
          std::vector<std::uint32_t> words(64);
          for (std::uint32_t i = 0; i < 64; ++i) words[i] = 1000 + i;
          w.st_shared(kData + 512, std::as_bytes(std::span(words)));
          if (mistake != 1) w.fence_proxy_async();
          const ClusterSmemAddr dst = w.mapa(kData, 0);  // (mapa is an instruction too)
          const ClusterBarrierRef bar = w.mapa(kBar, mistake == 3 ? 1 : 0);
          if (issued) *issued = w.now();
          w.bulk_copy_to_cluster(dst, kData + 512, 256, bar);
        } else {
          w.mbarrier_arrive_expect_tx(kBar, 256);
          if (mistake == 2) co_await w.sleep(20);
          else co_await w.mbarrier_wait(kBar, 0);
          if (woke) *woke = w.now();
          const std::uint32_t v = w.ld_shared_u32(kData + 4 * 63);
          if (got) *got = v;
        }
        w.cluster_arrive();
        co_await w.cluster_wait();
      },
      {2, 1, 1}, 2);
}

TEST(DsmemTest, ABulkCopyLandsInThePeerAndCompletesItsTransaction) {
  Cycle woke = 0, issued = 0;
  std::uint32_t got = 0;
  bulk_copy(0, &woke, &got, &issued);
  EXPECT_EQ(woke, issued + 2 + 30 + 10);
  EXPECT_EQ(got, 1063u);
  expect_misuse([] { bulk_copy(1); }, Rule::RaceMissingProxyFence);
  expect_misuse([] { bulk_copy(2); }, Rule::RaceEarlyRead);
  const MisuseError e = expect_misuse([] { bulk_copy(3); }, Rule::TmaInvalid);
  EXPECT_NE(std::string(e.what()).find("the barrier is in CTA 1 but the bytes go to CTA 0"), std::string::npos)
      << e.what();
}

TEST(DsmemTest, AccessToAnExitedPeerOrOutsideTheClusterIsAnError) {
  const MisuseError e = expect_misuse(
      [] {
        run_clusters(
            [](Warp& w) -> Task {
              if (w.cluster_ctarank() == 1) co_return;
              co_await w.sleep(100);
              std::uint32_t v = 0;
              w.ld_shared_cluster(w.mapa(kData, 1), std::as_writable_bytes(std::span<std::uint32_t>(&v, 1)));
            },
            {2, 1, 1}, 2);
      },
      Rule::ClusterPeerExited);
  EXPECT_NE(std::string(e.what()).find("cluster 0 rank 0"), std::string::npos) << e.what();
  expect_misuse([] { run_clusters([](Warp& w) -> Task { w.mapa(kData, 2); co_return; }, {2, 1, 1}, 2); },
                Rule::ClusterRankOutOfRange);
}

// ---------------------------------------------------------------------------------- TMA multicast

struct McastRig {
  Simulator sim{test::unit_config_16sm(), SimOptions{}};
  GmemAddr src = sim.gmem().alloc(64 * 16);
  TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = src, .dims = {64, 16}, .strides = {64},
                                    .box = {64, 16}, .swizzle = Swizzle::None});
  McastRig() {
    auto bytes = sim.gmem().bytes(src, 64 * 16);
    for (std::uint32_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 7 + 1);
  }
  RunResult run(ClusterShape c, const WarpProgram& p) {
    return sim.launch("mcast", LaunchConfig{.grid_ctas = c.size(), .block_threads = 32, .dynamic_smem_bytes = 4096,
                                            .cluster = c},
                      p);
  }
};

TEST(TmaMulticastTest, TheMaskDecidesWhichCtasGetDataAndTxBytes) {
  // Rank 0 multicasts one 1 KiB box to ranks 1 and 3 of a 4-CTA cluster. Every CTA expects the
  // bytes on its own barrier; only 1 and 3 complete, with the data; 0 and 2 keep 1024 pending tx
  // and untouched SMEM.
  McastRig rig;
  std::array<std::int64_t, 4> tx{};
  std::array<bool, 4> data_ok{};
  const RunResult r = rig.run({4, 1, 1}, [&](Warp& w) -> Task {
    const std::uint32_t rank = w.cluster_ctarank();
    w.mbarrier_init(kBar, 1);
    w.mbarrier_arrive_expect_tx(kBar, 1024);
    w.fence_mbarrier_init();
    w.cluster_arrive();
    co_await w.cluster_wait();
    if (rank == 0) w.tma_load(rig.map, kData, kBar, {0, 0}, {.multicast_mask = 0b1010});
    if (rank % 2 == 1) co_await w.mbarrier_wait(kBar, 0);
    else co_await w.sleep(2000);
    tx[rank] = w.cta().find_barrier(kBar.offset)->tx();
    std::vector<std::byte> got(1024);
    w.ld_shared(kData, got);
    const auto src = rig.sim.gmem().bytes(rig.src, 1024);
    data_ok[rank] = std::memcmp(got.data(), src.data(), 1024) == 0;
    w.cluster_arrive();
    co_await w.cluster_wait();
  });
  EXPECT_EQ(tx, (std::array<std::int64_t, 4>{1024, 0, 1024, 0}));
  EXPECT_EQ(data_ok, (std::array<bool, 4>{false, true, false, true}));
  EXPECT_EQ(r.tma.loads, 1u);
  EXPECT_EQ(r.tma.load_bytes, 1024u);       // read from L2 once
  EXPECT_EQ(r.tma.delivered_bytes, 2048u);  // landed twice
}

TEST(TmaMulticastTest, MulticastAddsItsExtraLatency) {
  // 1024 B at 64 B/cycle = 16 cycles streaming after 2 issue cycles, + load latency 100, + 40 for
  // the multicast form; the waiter resumes 10 after complete_tx.
  for (std::uint16_t mask : {std::uint16_t{0}, std::uint16_t{0b11}}) {
    McastRig rig;
    Cycle issued = 0, woke = 0;
    rig.run({2, 1, 1}, [&](Warp& w) -> Task {
      w.mbarrier_init(kBar, 1);
      w.mbarrier_arrive_expect_tx(kBar, 1024);
      w.fence_mbarrier_init();
      w.cluster_arrive_relaxed();
      co_await w.cluster_wait();
      if (w.cluster_ctarank() == 0) {
        issued = w.now();
        w.tma_load(rig.map, kData, kBar, {0, 0}, {.multicast_mask = mask});
        co_await w.mbarrier_wait(kBar, 0);
        woke = w.now();
      } else if (mask) {
        co_await w.mbarrier_wait(kBar, 0);
      } else {
        w.mbarrier_complete_tx(kBar, 1024);
      }
      w.cluster_arrive_relaxed();
      co_await w.cluster_wait();
    });
    EXPECT_EQ(woke - issued, 2u + 16u + 100u + (mask ? 40u : 0u) + 10u) << "mask " << mask;
  }
}

TEST(TmaMulticastTest, PairLoadsSignalOnlyTheLeadersBarrier) {
  // Both CTAs of a pair load one box each into their own SMEM with .cta_group::2: the leader's
  // barrier receives both boxes' bytes, the peer's barrier none.
  McastRig rig;
  std::array<std::int64_t, 2> tx{};
  std::array<bool, 2> data_ok{};
  rig.run({2, 1, 1}, [&](Warp& w) -> Task {
    const std::uint32_t rank = w.cluster_ctarank();
    w.mbarrier_init(kBar, 1);
    if (rank == 0) w.mbarrier_arrive_expect_tx(kBar, 2048);
    w.cluster_arrive();
    co_await w.cluster_wait();
    w.tma_load(rig.map, kData, kBar, {0, 0}, {.cta_group_2 = true});
    if (rank == 0) co_await w.mbarrier_wait(kBar, 0);
    // The peer learns that its box landed from the leader, through the cluster barrier.
    w.cluster_arrive();
    co_await w.cluster_wait();
    tx[rank] = w.cta().find_barrier(kBar.offset)->tx();
    std::vector<std::byte> got(1024);
    w.ld_shared(kData, got);
    data_ok[rank] = std::memcmp(got.data(), rig.sim.gmem().bytes(rig.src, 1024).data(), 1024) == 0;
    w.cluster_arrive();
    co_await w.cluster_wait();
  });
  EXPECT_EQ(tx, (std::array<std::int64_t, 2>{0, 0}));  // the leader's phase completed; the peer's never had any
  EXPECT_EQ(data_ok, (std::array<bool, 2>{true, true}));
}

TEST(TmaMulticastTest, MaskOutsideTheClusterAndPairWithoutAPairAreErrors) {
  McastRig rig;
  expect_misuse(
      [&] {
        rig.run({2, 1, 1}, [&](Warp& w) -> Task {
          w.mbarrier_init(kBar, 1);
          w.tma_load(rig.map, kData, kBar, {0, 0}, {.multicast_mask = 0b100});
          co_return;
        });
      },
      Rule::ClusterRankOutOfRange);
  McastRig rig1;
  expect_misuse(
      [&] {
        rig1.run({1, 1, 1}, [&](Warp& w) -> Task {
          w.mbarrier_init(kBar, 1);
          w.tma_load(rig1.map, kData, kBar, {0, 0}, {.cta_group_2 = true});
          co_return;
        });
      },
      Rule::CtaPairMisuse);
}

// ---------------------------------------------------------------------------------- tcgen05 pair

TEST(MmaPairTest, CommitMulticastArrivesOncePerMaskedCta) {
  std::array<std::uint32_t, 4> pending{};
  run_clusters(
      [&](Warp& w) -> Task {
        w.mbarrier_init(kBar, 2);
        w.cluster_arrive();
        co_await w.cluster_wait();
        if (w.cluster_ctarank() == 0) w.tcgen05_commit(kBar, 0b0101);
        co_await w.sleep(100);
        pending[w.cluster_ctarank()] = w.cta().find_barrier(kBar.offset)->pending();
        w.cluster_arrive();
        co_await w.cluster_wait();
      },
      {4, 1, 1}, 4);
  EXPECT_EQ(pending, (std::array<std::uint32_t, 4>{1, 2, 1, 2}));
}

// A (128 rows per CTA) and B (16 rows per CTA) bf16, K-major without swizzle (LBO 128, SBO 256).
void put_bf16(Warp& w, SmemAddr base, std::uint32_t r, std::uint32_t k, float v) {
  const std::uint16_t b = float_to_bf16(v);
  w.st_shared(base + ((r % 8) * 16 + (r / 8) * 256 + (k % 8) * 2 + (k / 8) * 128),
              std::as_bytes(std::span<const std::uint16_t>(&b, 1)));
}
SmemDescriptor core_desc(SmemAddr base) {
  return encode(SmemDescriptorFields{.start_address = base.offset, .leading_byte_offset = 128, .stride_byte_offset = 256});
}

TEST(MmaPairTest, M256SplitsAAndBAcrossThePairAndWritesEachCtasRows) {
  // CTA c holds A rows 128c..128c+127 with A[m][k] = 1 for k == m % 16, and B rows 16c..16c+15
  // with B[n][k] = k + n. D[m][n] = m % 16 + n lands in CTA m / 128, lane m % 128.
  constexpr SmemAddr a{1024}, b{1024 + 16 * 256};
  std::array<std::vector<std::uint32_t>, 2> rows;
  std::array<std::uint32_t, 2> cols{};
  run_clusters(
      [&](Warp& w) -> Task {
        const std::uint32_t c = w.cluster_ctarank();
        for (std::uint32_t m = 0; m < 128; ++m)
          for (std::uint32_t k = 0; k < 16; ++k) put_bf16(w, a, m, k, k == (128 * c + m) % 16 ? 1.0f : 0.0f);
        for (std::uint32_t n = 0; n < 16; ++n)
          for (std::uint32_t k = 0; k < 16; ++k) put_bf16(w, b, n, k, static_cast<float>(k + 16 * c + n));
        w.fence_proxy_async();
        const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32, 2);
        cols[c] = d.column();
        w.mbarrier_init(kBar, 1);
        w.cluster_arrive();
        co_await w.cluster_wait();
        if (c == 0) {
          w.tcgen05_mma(MmaKind::F16, d, core_desc(a), core_desc(b), encode(MmaKind::F16, {.m = 256, .n = 32}), false, 2);
          w.tcgen05_commit(kBar, 0b11);
        }
        co_await w.mbarrier_wait(kBar, 0);
        rows[c].resize(32 * 32);
        w.tcgen05_ld(d, TmemShape::S32x32b, 32, rows[c]);  // lanes 0..31
        co_await w.tcgen05_wait_ld();
        w.cluster_arrive();
        co_await w.cluster_wait();
        w.tcgen05_dealloc(d, 32, 2);
      },
      {2, 1, 1}, 2, 32, 16384);
  EXPECT_EQ(cols[0], cols[1]);
  for (std::uint32_t c : {0u, 1u})
    for (std::uint32_t m : {0u, 5u, 31u})
      for (std::uint32_t n : {0u, 15u, 16u, 31u})
        EXPECT_EQ(std::bit_cast<float>(rows[c][m * 32 + n]), static_cast<float>((128 * c + m) % 16 + n))
            << "cta " << c << " m " << m << " n " << n;
}

TEST(MmaPairTest, M256TakesTheCyclesDerivedFromTheConfig) {
  // SS M=256 N=256 bf16 over a pair: per SM math 2*128*256*16/8192 = 128, SMEM (4096 + 4096)/128
  // = 64; done 1 + 128 + 120 (latency_2cta_ss) after issue; +15 commit and wake.
  Cycle elapsed = 0;
  run_clusters(
      [&](Warp& w) -> Task {
        const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 256, 2);
        w.mbarrier_init(kBar, 1);
        w.cluster_arrive_relaxed();
        co_await w.cluster_wait();
        if (w.cluster_ctarank() == 0) {
          const Cycle t = w.now();
          w.tcgen05_mma(MmaKind::F16, d, core_desc(SmemAddr{1024}), core_desc(SmemAddr{8192}),
                        encode(MmaKind::F16, {.m = 256, .n = 256}), false, 2);
          w.tcgen05_commit(kBar);
          co_await w.mbarrier_wait(kBar, 0);
          elapsed = w.now() - t;
        }
        w.cluster_arrive_relaxed();
        co_await w.cluster_wait();
        w.tcgen05_dealloc(d, 256, 2);
      },
      {2, 1, 1}, 2, 32, 32768, Mode::Timing);
  EXPECT_EQ(elapsed, 1u + 128u + 120u + 15u);
}

TEST(MmaPairTest, IssuedFromTheNonLeaderOrWithoutAPairIsAnError) {
  auto program = [](Warp& w) -> Task {
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 256, w.cluster_nctarank() == 2 ? 2 : 1);
    if (w.cluster_ctarank() == w.cluster_nctarank() - 1)
      w.tcgen05_mma(MmaKind::F16, d, core_desc(SmemAddr{1024}), core_desc(SmemAddr{8192}),
                    encode(MmaKind::F16, {.m = 256, .n = 256}), false, 2);
  };
  const MisuseError e = expect_misuse([&] { run_clusters(program, {2, 1, 1}, 2, 32, 32768, Mode::Timing); },
                                      Rule::CtaPairMisuse);
  EXPECT_NE(std::string(e.what()).find("only the leader (rank 0)"), std::string::npos) << e.what();
  expect_misuse([&] { run_clusters(program, {1, 1, 1}, 1, 32, 32768, Mode::Timing); }, Rule::CtaPairMisuse);
}

TEST(MmaPairTest, PairAllocWaitsForThePeerAndADeadlockNamesIt) {
  try {
    run_clusters(
        [](Warp& w) -> Task {
          if (w.cluster_ctarank() == 0) co_await w.tcgen05_alloc(kSlot, 32, 2);
        },
        {2, 1, 1}, 2);
    FAIL() << "no deadlock";
  } catch (const DeadlockError& e) {
    EXPECT_NE(std::string(e.what()).find("waiting for a warp of the peer CTA (rank 1)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bwsim
