// The cross-SM census (--cross-sm, docs/parallel-simulation.md): how events are counted per
// coupling and the leads of a cluster's remote operations on unit_test.yaml.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/kernels/Gemm.hpp"

namespace bwsim {
namespace {

TEST(CrossSmCensusTest, CountsOperationsEventsAndLeads) {
  CrossSmCensus c;
  c.note(Coupling::Cluster, 7, 50);  // event 7: two cluster operations and a memory request
  c.note(Coupling::Cluster, 7, 0);
  c.note(Coupling::MemoryRequest, 7, 3);
  c.note(Coupling::Cluster, 9, 64);  // event 9: one more
  const CouplingCount& cluster = c.kinds[static_cast<std::size_t>(Coupling::Cluster)];
  EXPECT_EQ(cluster.operations, 3u);
  EXPECT_EQ(cluster.events, 2u);
  EXPECT_EQ(cluster.min_lead, 0u);
  EXPECT_EQ(cluster.lead_log2[0], 1u);  // lead 0
  EXPECT_EQ(cluster.lead_log2[6], 1u);  // 32 <= 50 < 64
  EXPECT_EQ(cluster.lead_log2[7], 1u);  // 64 <= 64 < 128
  const CouplingCount& memory = c.kinds[static_cast<std::size_t>(Coupling::MemoryRequest)];
  EXPECT_EQ(memory.events, 1u);
  EXPECT_EQ(memory.lead_log2[2], 1u);  // 2 <= 3 < 4
  EXPECT_EQ(c.coupled_events, 2u);    // events 7 and 9
  // The first event is sequence 0: it counts too.
  CrossSmCensus first;
  first.note(Coupling::Launch, 0, 0);
  EXPECT_EQ(first.coupled_events, 1u);
}

// Rank 1 stores into rank 0's SMEM and arrives on its barrier; rank 0 then reads rank 1's SMEM.
// unit_test.yaml: the store lands dsmem_store_latency (30) after it issues, the arrival
// remote_arrive_latency (50) after, and the load reads the peer's SMEM as it is (lead 0).
TEST(CrossSmCensusTest, AClustersRemoteOperationsAreItsCouplings) {
  constexpr MBarrierRef kBar{8};
  constexpr SmemAddr kData{1024};
  const auto program = [&](Warp& w) -> Task {
    if (w.cluster_ctarank() == 0) {
      w.mbarrier_init(kBar, 1);
      w.fence_mbarrier_init();
    }
    w.cluster_arrive_relaxed();
    co_await w.cluster_wait();
    if (w.cluster_ctarank() == 1) {
      const std::uint32_t v = 1234;
      w.st_shared_cluster(w.mapa(kData, 0), std::as_bytes(std::span<const std::uint32_t>(&v, 1)));
      w.mbarrier_arrive(w.mapa(kBar, 0));
    } else {
      co_await w.mbarrier_wait(kBar, 0);
      std::uint32_t loaded = 0;
      w.ld_shared_cluster(w.mapa(kData, 1), std::as_writable_bytes(std::span<std::uint32_t>(&loaded, 1)));
    }
    w.cluster_arrive_relaxed();
    co_await w.cluster_wait();
  };
  const LaunchConfig launch{.grid_ctas = 2, .block_threads = 32, .dynamic_smem_bytes = 4096, .cluster = {2, 1, 1}};
  const RunResult off = Simulator(test::unit_config_16sm(), SimOptions{}).launch("test", launch, program);
  EXPECT_FALSE(off.cross_sm.has_value());

  const RunResult r =
      Simulator(test::unit_config_16sm(), SimOptions{.cross_sm_census = true}).launch("test", launch, program);
  ASSERT_TRUE(r.cross_sm.has_value());
  EXPECT_EQ(r.cycles, off.cycles);  // counting changes nothing
  EXPECT_EQ(r.events, off.events);
  const CouplingCount& cluster = r.cross_sm->kinds[static_cast<std::size_t>(Coupling::Cluster)];
  EXPECT_EQ(cluster.operations, 3u);
  EXPECT_EQ(cluster.min_lead, 0u);
  EXPECT_EQ(cluster.lead_log2[0], 1u);  // the load
  EXPECT_EQ(cluster.lead_log2[5], 1u);  // the store: 30 plus the issue of st.shared::cluster, below 32
  EXPECT_EQ(cluster.lead_log2[6], 1u);  // the arrival: 50 plus its issue, below 64
  EXPECT_EQ(r.cross_sm->kinds[static_cast<std::size_t>(Coupling::Launch)].operations, 1u);  // the cluster retires
  EXPECT_EQ(r.cross_sm->kinds[static_cast<std::size_t>(Coupling::MemoryRequest)].operations, 0u);
}

// A 2-SM GEMM with 2x1 clusters on the B200 config: every TMA request is one memory request and,
// but a prefetch, one reply; the CTA pairs' MMAs and multicast loads are cluster couplings; the
// B200 has no CPC gate. The predicted run is the same with the census on.
TEST(CrossSmCensusTest, AGemmsMemoryCouplingsAreItsTmaRequests) {
  const GemmParams p{.m = 512, .n = 512, .k = 256, .ctas = 4, .cluster_m = 2, .two_sm = true};
  const GemmResult off = run_gemm(test::b200_config(), SimOptions{.mode = Mode::Timing}, p, false);
  const GemmResult r = run_gemm(test::b200_config(), SimOptions{.mode = Mode::Timing, .cross_sm_census = true}, p, false);
  ASSERT_TRUE(r.run.cross_sm.has_value());
  EXPECT_EQ(r.run.cycles, off.run.cycles);
  EXPECT_EQ(r.run.events, off.run.events);
  const auto kind = [&](Coupling k) { return r.run.cross_sm->kinds[static_cast<std::size_t>(k)]; };
  const TmaStats& tma = r.run.tma;
  EXPECT_EQ(kind(Coupling::MemoryRequest).operations, tma.loads + tma.stores + tma.reduces + tma.prefetches);
  EXPECT_EQ(kind(Coupling::MemoryReply).operations, tma.loads + tma.stores + tma.reduces);
  // No box lands sooner than tma.load_latency after its request starts.
  EXPECT_GE(kind(Coupling::MemoryReply).min_lead, test::b200_config().tma.load_latency);
  EXPECT_GT(kind(Coupling::Cluster).operations, 0u);
  EXPECT_EQ(kind(Coupling::CpcGate).operations, 0u);
  EXPECT_LE(r.run.cross_sm->coupled_events, r.run.events);
}

}  // namespace
}  // namespace bwsim
