// The CPC load gate (l2.cpc_load_bytes_in_flight): which SMs share a CPC, the order in which
// waiting loads go, and the exact cycles of a gated load on the unit-test config (TMA issue 2,
// 64 B/cycle, load latency 100, wakeup 10; an L2 so fast that a load's time is the unit's).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/memory/CpcLoadGate.hpp"
#include "bwsim/hw/memory/TensorCopy.hpp"

namespace bwsim {
namespace {

std::map<std::uint32_t, std::uint32_t> sms_per_cpc(const ChipLayout& layout) {
  std::map<std::uint32_t, std::uint32_t> n;
  for (const std::uint32_t c : layout.cpc) ++n[c];
  return n;
}

TEST(CpcLoadGateTest, TheH100HasSixCpcsShortOfATpc) {
  // 66 TPCs in 8 GPCs of 8, 8, 8, 8, 8, 8, 9, 9 (sm.gpc_tpcs, measured), every third TPC of a GPC in
  // one CPC (sm.tpc_cpcs): a GPC of 9 has three CPCs of 6 SMs, one of 8 two of 6 and one of 4, so
  // 18 CPCs of 6 SMs and 6 of 4 (24 SMs).
  for (const char* chip : {"/sim_configs/h100.yaml", "/sim_configs/h200.yaml"}) {
    const ChipLayout layout = chip_layout(load_config(std::string(BWSIM_SOURCE_DIR) + chip));
    std::map<std::uint32_t, std::uint32_t> sizes;
    for (const auto& [cpc, n] : sms_per_cpc(layout)) ++sizes[n];
    EXPECT_EQ(sizes, (std::map<std::uint32_t, std::uint32_t>{{4, 6}, {6, 18}}));
    // GPC 1 (SMs 16..31): its 3rd and 6th TPC share the short CPC, the 1st, 4th and 7th a full one.
    EXPECT_EQ(layout.cpc[20], layout.cpc[27]);
    EXPECT_EQ(sms_per_cpc(layout)[layout.cpc[20]], 4u);
    EXPECT_EQ(layout.cpc[16], layout.cpc[22]);
    EXPECT_EQ(layout.cpc[16], layout.cpc[29]);
    EXPECT_NE(layout.cpc[16], layout.cpc[18]);
    // GPC 0 starts with its 4 loose TPCs (the block scheduler's order): its short CPC is SMs 2, 3,
    // 12, 13, silicon's CTAs 2, 3, 12, 13 of a full grid (smids 126, 127, 32, 33).
    EXPECT_EQ(layout.cpc[2], layout.cpc[13]);
    EXPECT_EQ(sms_per_cpc(layout)[layout.cpc[2]], 4u);
    // The 18-SM GPC 6 (SMs 96..113): no short CPC.
    EXPECT_EQ(sms_per_cpc(layout)[layout.cpc[100]], 6u);
  }
}

TEST(CpcLoadGateTest, WithoutTpcsPerCpcEachGpcIsOneCpc) {
  const ChipLayout layout = chip_layout(test::b200_config());
  EXPECT_EQ(sms_per_cpc(layout).size(), layout.gpcs());
  EXPECT_EQ(test::b200_config().l2.cpc_load_bytes_in_flight, 0u);
}

TEST(CpcLoadGateTest, TheLimitNeedsTheCpcs) {
  EXPECT_THROW(load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"l2.cpc_load_bytes_in_flight=4096"}),
               ConfigError);
}

// Records the order in which waiting loads are let go.
struct Recorder {
  std::vector<std::uint64_t> admitted;
  static void on_admitted(void* self, std::uint64_t slot) { static_cast<Recorder*>(self)->admitted.push_back(slot); }
};

TEST(CpcLoadGateTest, WaitingLoadsGoSmBySmInTurnAndInIssueOrderWithinAnSm) {
  // 4 SMs, one TPC per CPC: SMs {0, 1} and {2, 3}; 3000 bytes each.
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml",
                                         {"sm.tpcs_per_cpc=1", "l2.cpc_load_bytes_in_flight=3000"});
  CpcLoadGate gate(chip_layout(cfg), cfg.l2.cpc_load_bytes_in_flight);
  Recorder rec;
  auto admit = [&](std::uint32_t sm, std::uint32_t bytes, std::uint64_t slot) {
    return gate.admit(sm, bytes, &Recorder::on_admitted, &rec, slot);
  };
  EXPECT_TRUE(admit(0, 2000, 1));
  EXPECT_TRUE(admit(1, 1000, 2));   // 3000 in flight: full
  EXPECT_FALSE(admit(0, 1000, 3));  // SM 0 waits
  EXPECT_FALSE(admit(0, 500, 4));   // behind its own waiting load, though it would not fit either
  EXPECT_FALSE(admit(1, 1000, 5));
  EXPECT_TRUE(admit(2, 3000, 6));   // the other CPC is empty
  EXPECT_FALSE(admit(3, 5000, 7));  // larger than the limit: waits until its CPC is empty
  gate.release(1, 1000);            // room for 1000: SM 0's turn (its 1000); SM 1's 1000 and SM 0's 500 wait
  EXPECT_EQ(rec.admitted, (std::vector<std::uint64_t>{3}));
  gate.release(0, 2000);            // 2000 free: SM 1's turn (1000), then SM 0's 500
  EXPECT_EQ(rec.admitted, (std::vector<std::uint64_t>{3, 5, 4}));
  gate.release(2, 3000);            // CPC {2, 3} empty: the oversized load goes alone
  EXPECT_EQ(rec.admitted, (std::vector<std::uint64_t>{3, 5, 4, 7}));
  EXPECT_FALSE(admit(2, 1, 8));
}

TEST(CpcLoadGateTest, TurnsGoRoundTheSmsOfACpcWhoseTpcsAreNotAdjacent) {
  // 6 SMs in one GPC of 3 TPCs; the 1st and 3rd TPC share CPC 0 (SMs 0, 1, 4, 5), the 2nd has
  // CPC 1 (SMs 2, 3) to itself; 3000 bytes each.
  std::string yaml = test::config_text("unit_test");
  yaml.replace(yaml.find("count: 4"), 8, "count: 6");
  yaml.replace(yaml.find("tpcs_per_cpc: 0"), 15, "gpc_tpcs: [3]\n  tpc_cpcs: [0, 1, 0]");
  HardwareConfig cfg = parse_config(yaml, "interleaved");
  cfg.l2.cpc_load_bytes_in_flight = 3000;
  const ChipLayout layout = chip_layout(cfg);
  EXPECT_EQ(layout.cpc, (std::vector<std::uint32_t>{0, 0, 1, 1, 0, 0}));
  CpcLoadGate gate(layout, cfg.l2.cpc_load_bytes_in_flight);
  Recorder rec;
  auto admit = [&](std::uint32_t sm, std::uint32_t bytes, std::uint64_t slot) {
    return gate.admit(sm, bytes, &Recorder::on_admitted, &rec, slot);
  };
  EXPECT_TRUE(admit(0, 2000, 1));
  EXPECT_TRUE(admit(4, 1000, 2));   // SM 4 shares SM 0's CPC: 3000 in flight, full
  EXPECT_TRUE(admit(2, 3000, 3));   // SMs 2 and 3 have their own
  EXPECT_FALSE(admit(4, 1000, 4));
  EXPECT_FALSE(admit(1, 500, 5));
  EXPECT_FALSE(admit(0, 1000, 6));
  gate.release(0, 2000);            // 2000 free, turns from SM 0: SM 0's 1000, SM 1's 500; SM 4's waits
  EXPECT_EQ(rec.admitted, (std::vector<std::uint64_t>{6, 5}));
  gate.release(4, 1000);            // SM 4's turn
  EXPECT_EQ(rec.admitted, (std::vector<std::uint64_t>{6, 5, 4}));
}

TEST(CpcLoadGateTest, AGatedLoadGoesWhenTheLoadAheadOfItLands) {
  // Each of 4 CTAs (one per SM) loads one 4096-byte box at cycle 2; each CPC (one TPC, 2 SMs) may
  // hold one box in flight. The first of a CPC streams 4 .. 68 and lands at 168 (its waiter
  // resumes at 178); the other starts at 168, streams to 232 and lands at 332 (resumes at 342).
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml",
                                         {"sm.tpcs_per_cpc=1", "l2.cpc_load_bytes_in_flight=4096"});
  Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
  const GmemAddr a = sim.gmem().alloc(4 * 4096);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = a, .dims = {128, 128}, .strides = {128},
                                          .box = {128, 32}, .elem_strides = {}, .swizzle = Swizzle::B128,
                                          .oob_fill = OobFill::Zero});
  constexpr MBarrierRef kBar{0};
  std::vector<Cycle> resumed(4);
  const RunResult r = sim.launch("gate", LaunchConfig{.grid_ctas = 4, .block_threads = 32, .dynamic_smem_bytes = 8192},
                                 [&](Warp& w) -> Task {
                                   w.mbarrier_init(kBar, 1);
                                   w.mbarrier_arrive_expect_tx(kBar, map.box_bytes());
                                   w.tma_load(map, SmemAddr{1024}, kBar, {0, static_cast<std::int32_t>(32 * w.cta_idx())});
                                   co_await w.mbarrier_wait(kBar, 0);
                                   resumed[w.cta_idx()] = w.now();
                                 });
  std::sort(resumed.begin(), resumed.end());
  EXPECT_EQ(resumed, (std::vector<Cycle>{178, 178, 342, 342}));
  EXPECT_EQ(r.cycles, 342u);
  EXPECT_EQ(r.tma.gated_loads, 2u);
  EXPECT_EQ(r.tma.gate_wait_cycles, 2u * (168 - 4));
}

}  // namespace
}  // namespace bwsim
