// The chip's block scheduler: GPC and TPC placement of clusters, occupancy limits, waves, and
// the persistent grid size.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/sm/Gpu.hpp"

namespace bwsim {
namespace {

// Each CTA's SM and start cycle (warp 0's), from a run of CTAs that sleep `work` cycles.
struct Where {
  std::uint32_t sm;
  Cycle start;
};
std::map<std::uint32_t, Where> run_sleepers(const HardwareConfig& cfg, LaunchConfig lc, Cycle work) {
  Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
  const RunResult r = sim.launch("sleepers", lc, [work](Warp& w) -> Task { co_await w.sleep(work); });
  std::map<std::uint32_t, Where> out;
  for (const WarpSummary& s : r.warps)
    if (s.warp == 0) out[s.cta] = {s.sm, s.start};
  return out;
}

TEST(GpuTest, B200GpcsSpreadItsTpcsEvenly) {
  // 148 SMs = 74 TPCs, 37 per die, each die's over its 4 GPCs: one of 10 TPCs (20 SMs), three of 9 (18).
  EXPECT_EQ(chip_layout(test::b200_config()).gpc_first, (std::vector<std::uint32_t>{0, 20, 38, 56, 74, 94, 112, 130}));
  EXPECT_EQ(max_active_clusters(test::b200_config(), 1), 148u);
  EXPECT_EQ(max_active_clusters(test::b200_config(), 2), 74u);
  // 16-CTA clusters: one per GPC, the rest of each GPC stranded.
  EXPECT_EQ(max_active_clusters(test::b200_config(), 16), 8u);
  // 10 GPCs (74 TPCs: four of 8, six of 7 -> 16 and 14 SMs): only four GPCs hold a 16-CTA cluster.
  const HardwareConfig ten = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml", {"sm.gpcs=10"});
  EXPECT_EQ(max_active_clusters(ten, 16), 4u);
}

TEST(GpuTest, ClustersStayInsideOneGpcWithPairsOnOneTpc) {
  // B200, 16-CTA clusters, 8 of them: cluster k fills SMs from the start of GPC k.
  const HardwareConfig& cfg = test::b200_config();
  const auto first = chip_layout(cfg).gpc_first;
  const auto where = run_sleepers(cfg, LaunchConfig{.grid_ctas = 128, .block_threads = 32, .dynamic_smem_bytes = 200000,
                                                    .cluster = {16, 1, 1}, .non_portable_cluster = true},
                                  100);
  for (std::uint32_t cta = 0; cta < 128; ++cta) {
    const std::uint32_t cluster = cta / 16, rank = cta % 16;
    EXPECT_EQ(where.at(cta).sm, first[cluster] + rank) << "CTA " << cta;
    if (rank % 2 == 1) {
      EXPECT_EQ(where.at(cta).sm / 2, where.at(cta - 1).sm / 2) << "pair of CTA " << cta;
    }
  }
}

TEST(GpuTest, B200DiesHaveHalfTheSmsAndClustersNeverSpanThem) {
  const HardwareConfig& cfg = test::b200_config();
  const ChipLayout layout = chip_layout(cfg);
  EXPECT_EQ(std::count(layout.die.begin(), layout.die.end(), 0), 74);
  EXPECT_EQ(layout.die[73], 0);
  EXPECT_EQ(layout.die[74], 1);  // GPC 4 starts the second die
  // A full chip of clusters of every size: each cluster's CTAs on SMs of one die.
  for (const std::uint32_t size : {2u, 4u, 8u, 16u}) {
    const std::uint32_t clusters = max_active_clusters(cfg, size);
    const auto where = run_sleepers(cfg,
                                    LaunchConfig{.grid_ctas = clusters * size, .block_threads = 32,
                                                 .dynamic_smem_bytes = 200000, .cluster = {size, 1, 1},
                                                 .non_portable_cluster = size > 8},
                                    100);
    std::uint32_t on_die1 = 0;
    for (std::uint32_t cta = 0; cta < clusters * size; ++cta) {
      const std::uint32_t leader = cta / size * size;
      EXPECT_EQ(layout.die[where.at(cta).sm], layout.die[where.at(leader).sm]) << size << "-CTA cluster, CTA " << cta;
      on_die1 += layout.die[where.at(cta).sm];
    }
    EXPECT_EQ(on_die1, clusters * size / 2) << size;  // the dies are alike: half the clusters each
  }
}

inline const HardwareConfig& h100_config() {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  return cfg;
}

TEST(GpuTest, AGridSmallerThanTheChipTakesOneSmOfEveryTpcFirst) {
  // H100 config: 132 SMs, 66 TPCs, 8 GPCs of 18/16/16/16 SMs per die. 66 CTAs of 200 KB (one per
  // SM): one on every TPC, so 33 on each die; CTA ids in SM order, so CTA c on SM 2c (silicon:
  // h100_gemm_loads_tiles_private_l2_a_g66.csv, one SM of each TPC).
  const HardwareConfig& cfg = h100_config();
  const ChipLayout layout = chip_layout(cfg);
  const LaunchConfig lc{.grid_ctas = 66, .block_threads = 32, .dynamic_smem_bytes = 200000};
  const auto half = run_sleepers(cfg, lc, 100);
  for (std::uint32_t cta = 0; cta < 66; ++cta) EXPECT_EQ(half.at(cta).sm, 2 * cta) << "CTA " << cta;

  // 100 CTAs: every TPC first, then second SMs to the GPCs with the fewest CTAs: 12 or 13 in each
  // GPC (100 = 4 x 13 + 4 x 12), ids still in SM order.
  auto more = lc;
  more.grid_ctas = 100;
  const auto where = run_sleepers(cfg, more, 100);
  std::vector<std::uint32_t> per_tpc(66), per_gpc(layout.gpcs());
  for (std::uint32_t cta = 0; cta < 100; ++cta) {
    const std::uint32_t sm = where.at(cta).sm;
    ++per_tpc[sm / 2];
    for (std::uint32_t g = 0; g < layout.gpcs(); ++g) per_gpc[g] += sm >= layout.gpc_first[g] && sm < layout.gpc_end(g);
    if (cta > 0) {
      EXPECT_GT(sm, where.at(cta - 1).sm) << "CTA " << cta;
    }
  }
  EXPECT_EQ(*std::min_element(per_tpc.begin(), per_tpc.end()), 1u);
  std::sort(per_gpc.begin(), per_gpc.end());
  EXPECT_EQ(per_gpc, (std::vector<std::uint32_t>{12, 12, 12, 12, 13, 13, 13, 13}));
}

TEST(GpuTest, ClustersGoToTheGpcWithTheFewestCtas) {
  // B200, 8 clusters of 2: one per GPC (4 per die), each pair on one TPC, ids in SM order.
  const HardwareConfig& cfg = test::b200_config();
  const auto first = chip_layout(cfg).gpc_first;
  const auto where = run_sleepers(
      cfg, LaunchConfig{.grid_ctas = 16, .block_threads = 32, .dynamic_smem_bytes = 200000, .cluster = {2, 1, 1}}, 100);
  for (std::uint32_t cluster = 0; cluster < 8; ++cluster) {
    EXPECT_EQ(where.at(2 * cluster).sm, first[cluster]) << "cluster " << cluster;
    EXPECT_EQ(where.at(2 * cluster + 1).sm, first[cluster] + 1) << "cluster " << cluster;
  }
}

TEST(GpuTest, ATraceCoversTheFirstSmsToGetCtas) {
  // 4 CTAs on the H100 config go to the first SM of GPCs 0-3 (0, 16, 32, 48): the trace's 4 SMs.
  const std::string path = ::testing::TempDir() + "placement.trace.json";
  Simulator sim(h100_config(), SimOptions{.mode = Mode::Timing, .trace_path = path, .trace_sms = 4});
  const RunResult r = sim.launch("sleepers", LaunchConfig{.grid_ctas = 4, .block_threads = 32},
                                 [](Warp& w) -> Task { co_await w.sleep(10); });
  EXPECT_EQ(r.traced_sms, (std::vector<std::uint32_t>{0, 16, 32, 48}));
  std::vector<std::uint32_t> sms;
  for (const WarpSummary& s : r.warps) sms.push_back(s.sm);
  EXPECT_EQ(sms, r.traced_sms);
}

TEST(GpuTest, AClusterTooLargeForEveryGpcIsAClearError) {
  // unit-test chip cut into 2 GPCs of 2 SMs: a 4-CTA cluster can never be placed.
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"sm.gpcs=2"});
  Simulator sim(cfg, SimOptions{});
  try {
    sim.launch("k", LaunchConfig{.grid_ctas = 4, .block_threads = 32, .cluster = {4, 1, 1}},
               [](Warp&) -> Task { co_return; });
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a cluster of 4 CTAs must run on SMs of one GPC, and the largest GPC of the "
                                         "unit-test config has 2 SMs"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuTest, SharedMemoryLimitsResidentCtasAndLaterOnesRunInWaves) {
  // unit-test SMs have 64 KiB: two CTAs of 30000 bytes fit, a third does not. 12 CTAs on 4 SMs:
  // CTAs 0-3 take one per SM, 4-7 a second on each (breadth-first), 8-11 wait for the first wave.
  const auto where = run_sleepers(test::unit_config(),
                                  LaunchConfig{.grid_ctas = 12, .block_threads = 32, .dynamic_smem_bytes = 30000}, 1000);
  for (std::uint32_t cta = 0; cta < 8; ++cta) {
    EXPECT_EQ(where.at(cta).sm, cta % 4);
    EXPECT_EQ(where.at(cta).start, 0u);
  }
  for (std::uint32_t cta = 8; cta < 12; ++cta) EXPECT_GE(where.at(cta).start, 1000u) << "CTA " << cta;
}

TEST(GpuTest, WarpAndRegisterLimitsBoundOccupancy) {
  // 32 resident warps per unit-test SM: 512-thread CTAs (16 warps) go two to an SM. (Registers are
  // set low so they do not bind first: a launch without a count takes the most that fits one CTA.)
  auto warps = run_sleepers(test::unit_config(),
                            LaunchConfig{.grid_ctas = 12, .block_threads = 512, .registers_per_thread = 32}, 1000);
  EXPECT_EQ(warps.at(7).start, 0u);
  EXPECT_GE(warps.at(8).start, 1000u);
  // 64 K registers: 256 threads x 128 registers = 32 K, two CTAs per SM.
  auto regs = run_sleepers(test::unit_config(),
                           LaunchConfig{.grid_ctas = 12, .block_threads = 256, .registers_per_thread = 128}, 1000);
  EXPECT_EQ(regs.at(7).start, 0u);
  EXPECT_GE(regs.at(8).start, 1000u);
  // 32 resident CTAs per SM at most: 33 tiny CTAs on a 1-SM chip leave the last for a second wave.
  const HardwareConfig one = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"sm.count=1"});
  auto tiny = run_sleepers(
      one, LaunchConfig{.grid_ctas = 33, .block_threads = 32, .dynamic_smem_bytes = 64, .registers_per_thread = 32}, 1000);
  EXPECT_EQ(tiny.at(31).start, 0u);
  EXPECT_GE(tiny.at(32).start, 1000u);
}

TEST(GpuTest, TheLaunchLatencyDelaysTheFirstCtas) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"launch.latency=500"});
  const auto where = run_sleepers(cfg, LaunchConfig{.grid_ctas = 1, .block_threads = 32}, 10);
  EXPECT_EQ(where.at(0).start, 500u);
}

}  // namespace
}  // namespace bwsim
