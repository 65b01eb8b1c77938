// The H100 configuration against the H100 measurements (tools/calibration): every microbenchmark
// scenario simulated and compared with its measured row, within 10% or the stated tolerance.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "TestSupport.hpp"
#include "bwsim/core/Csv.hpp"
#include "bwsim/kernels/GemmSm90.hpp"
#include "bwsim/kernels/GemmSm90Compare.hpp"
#include "bwsim/kernels/Ubench.hpp"

namespace bwsim {
namespace {

constexpr const char* kMeasured = BWSIM_SOURCE_DIR "/tools/calibration/h100_measured.csv";
constexpr const char* kTolerances = BWSIM_SOURCE_DIR "/tools/calibration/h100_tolerances.csv";

// `csv` simulated on sim_configs/`chip`.yaml: `count` rows, each within its bound (10% or the one
// `tolerances` states), every wider bound with its reason. Returns the rows.
std::vector<UbenchComparison> expect_rows_within(const char* chip, const std::string& csv, const std::string& tolerances,
                                                 std::size_t count) {
  const HardwareConfig cfg = load_config(std::string(BWSIM_SOURCE_DIR "/sim_configs/") + chip + ".yaml");
  const auto rows = compare_with_hardware(cfg, csv, tolerances);
  EXPECT_EQ(rows.size(), count) << csv;
  for (const UbenchComparison& r : rows) {
    EXPECT_TRUE(r.within()) << chip << " " << r.scenario << " " << r.param << ": measured " << r.measured
                            << ", predicted " << r.predicted << " (" << 100 * r.error << "%, tolerance "
                            << 100 * r.tolerance << "%)";
    if (r.tolerance > 0.10) {
      EXPECT_FALSE(r.reason.empty()) << r.scenario;
    }
  }
  return rows;
}

// The row of `rows` for `scenario` at `param`; a test failure (and an empty row) if there is none.
UbenchComparison row_of(const std::vector<UbenchComparison>& rows, std::string_view scenario, std::uint32_t param) {
  const auto r = std::find_if(rows.begin(), rows.end(),
                              [&](const UbenchComparison& c) { return c.scenario == scenario && c.param == param; });
  if (r != rows.end()) return *r;
  ADD_FAILURE() << "no row " << scenario << " " << param;
  return {};
}

std::string calibration(const char* file) { return std::string(BWSIM_SOURCE_DIR "/tools/calibration/") + file; }

// <chip>`suffix` for the H100 and the H200, each chip's rows within their bounds (`tolerances`, a
// file here, or "" for 10% on every row), and `outside` (H100, H200) of them outside the 10% target.
void expect_both_chips(const char* suffix, const char* tolerances, std::size_t count,
                       std::array<std::size_t, 2> outside) {
  const char* chips[] = {"h100", "h200"};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto rows = expect_rows_within(chips[i], calibration((std::string(chips[i]) + suffix).c_str()),
                                         *tolerances ? calibration(tolerances) : std::string(), count);
    EXPECT_EQ(static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(),
                                                     [](const UbenchComparison& r) { return std::abs(r.error) > 0.10; })),
              outside[i])
        << chips[i] << suffix;
  }
}

TEST(CalibrationTest, EveryH100ScenarioIsWithinItsTolerance) {
  const auto rows = expect_rows_within("h100", kMeasured, kTolerances, 89);
  // only the rows the tolerance file names are widened
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [](const UbenchComparison& r) { return r.tolerance > 0.10; }), 4);
}

TEST(CalibrationTest, EveryH200ScenarioIsWithinItsToleranceWithItsOwnConfig) {
  expect_rows_within("h200", calibration("h200_measured.csv"), kTolerances, 91);
}

// Pairs of SMs reading the same cold boxes a set delay apart (h100_join_window.cu arrivals_cold,
// H200): with the L2 otherwise idle, the leader's miss and the partner's wait for the fill in
// flight match within 10% (a hit after the fill within 16% in the same GPC; from another GPC of the
// other L2 partition within 10% since the far half's hits pay dies.far_hit_latency, 14-16% fast
// before); with 68 SMs streaming beside them both roles' loaded latency is within 10% but one
// partner's (join_arrivals_tolerances.csv): 2 rows outside 10%. (28, the loaded ones 8-17% short, until the model's CPCs took every third TPC of a
// GPC, sm.tpc_cpcs: the streamers then shared CPCs with the pairs as on silicon.)
TEST(CalibrationTest, PairsReadingColdBoxesADelayApartOnTheH200) {
  const auto rows = expect_rows_within("h200", calibration("h200_join_arrivals_cold.csv"),
                                       calibration("join_arrivals_tolerances.csv"), 64);
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [](const UbenchComparison& r) { return std::abs(r.error) > 0.10; }),
            2);
}

// Reads that cross between the L2's partitions (h100_l2_partitions.cu swap / stay / oneway* after
// a flush, with 4 or 8 boxes in flight per SM, H200, run_l2_fabric.sh): crossing slows a pass by
// 1.5-1.7x, one direction carrying about 600 B/clk however many boxes are in flight (a rate, not a
// latency: h200.yaml dies.link_gbytes_per_second). Every row from 16 MiB on within 10%, 7 of the
// 8 MiB rows within 20% (l2_fabric_tolerances.csv); with the link at the crossbar's delivery rate
// (the estimate before) the warm crossing rows were 72-225% fast and the cold ones 20-40%.
// Another H200 (run_partition_paces.sh) crossed both ways: partition 1's SMs reading partition 0's
// data (oneway*) and partition 0's reading partition 1's (oneway_back*) move the same bytes per
// cycle within 1% (1119 / 1108 at 16 MiB, 1207 / 1198 at 32), warm or cold, as the model's one link
// rate each way gives; all 18 of its rows within 10%.
TEST(CalibrationTest, ReadsCrossingBetweenL2PartitionsOnTheH200) {
  const auto rows = expect_rows_within("h200", calibration("h200_l2_fabric_rows.csv"),
                                       calibration("l2_fabric_tolerances.csv"), 40);
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [](const UbenchComparison& r) { return std::abs(r.error) > 0.10; }),
            7);
  expect_rows_within("h200", calibration("h200_partition_paces_fabric_rows.csv"), std::string(), 18);
  HardwareConfig h200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  h200.dies.link_gbytes_per_second = 21350;
  const double oneway = static_cast<double>(run_ubench(h200, *find_ubench("l2_fabric_oneway_bytes_per_cycle"), 16));
  EXPECT_GT(oneway, 1.6 * 1123);  // silicon's 16 MiB row
}

// What a far read with the 256B L2 promotion costs the link (h200_partition_paces_run4_fabric_rows.csv,
// another H200, serial 1653924042660, run_partition_paces.sh): both partitions reading the other's
// warm data at once
// (swap) cross ~10% slower with the 256B promotion than with 128B, with the GEMM's boxes (128 rows
// 16 KiB apart: _k 2108 against _k128 2343 B/clk at 32 MiB) and with rows 128 B apart (_c256 2133
// against 2367), while one partition's reads alone (oneway) do not slow: the promotion sends traffic
// towards the data's partition, which competes only with data flowing that way
// (dies.promotion_request_share 0.11). Every row within its bound (the three cold 16 MiB rows with
// the GEMM's boxes +10-11%: l2_fabric_tolerances.csv); without the share the swap rows with the
// promotion are 11-17% fast.
TEST(CalibrationTest, AFarReadWithThe256BPromotionSendsTrafficBackAcrossOnTheH200) {
  const std::string csv = calibration("h200_partition_paces_run4_fabric_rows.csv");
  const auto rows = expect_rows_within("h200", csv, calibration("l2_fabric_tolerances.csv"), 42);
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [](const UbenchComparison& r) { return std::abs(r.error) > 0.10; }),
            3);
  HardwareConfig no_share = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  no_share.dies.promotion_request_share = 0;
  const auto without = compare_with_hardware(no_share, csv, "");
  for (const char* swap : {"l2_fabric_swap_k_bytes_per_cycle", "l2_fabric_swap_c256_bytes_per_cycle"})
    for (const std::uint32_t mib : {16u, 32u}) {
      EXPECT_LE(std::abs(row_of(rows, swap, mib).error), 0.07) << swap << " " << mib;
      EXPECT_GT(row_of(without, swap, mib).error, 0.10) << swap << " " << mib;
    }
  // Only the 256B promotion's reads pay it: the 128B rows and the one-way rows are the same without it.
  for (const char* same : {"l2_fabric_swap_bytes_per_cycle", "l2_fabric_swap_k128_bytes_per_cycle",
                           "l2_fabric_oneway_k_bytes_per_cycle", "l2_fabric_oneway_c256_bytes_per_cycle"})
    for (const std::uint32_t mib : {16u, 32u})
      EXPECT_EQ(row_of(rows, same, mib).predicted, row_of(without, same, mib).predicted) << same << " " << mib;
}

// Lines the 256B L2 promotion brings (h100_l2_partitions.cu promo_even / promo_odd, H200): a
// partition's SMs read rows' first halves cold, then other SMs of that partition read the first
// halves again or the promoted second halves. On silicon the second halves homed in the other
// partition cross the link (ncu: half of them): the reader's partition kept no copy. Within 10%;
// with such copies (the model before 2026-11-29) promo_odd ran 37-73% fast.
TEST(CalibrationTest, PromotedLinesStayInTheirHomePartitionOnTheH200) {
  expect_rows_within("h200", calibration("h200_l2_promotion_rows.csv"), std::string(), 4);
}

// The spread of each SM's box landings when all stream at once (h100_box_spread.cu, H200): the
// all-SM streams' rates are within 4%, the hits' p90 and the misses' median latencies within 10%,
// but the model's boxes land evenly where silicon's bunch (box_spread_tolerances.csv): 42 of 56
// rows outside 10%.
TEST(CalibrationTest, BoxLandingsOfAllSmStreamsOnTheH200) {
  const auto rows = expect_rows_within("h200", calibration("h200_box_spread.csv"),
                                       calibration("box_spread_tolerances.csv"), 56);
  for (const UbenchComparison& r : rows) {
    if (r.scenario.find("_all_bytes_per_cycle") != std::string::npos) {
      EXPECT_LE(std::abs(r.error), 0.04) << r.scenario;
    }
  }
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [](const UbenchComparison& r) { return std::abs(r.error) > 0.10; }),
            42);
  const HardwareConfig h200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  try {
    run_ubench(h200, *find_ubench("box_spread_l2_all_latency_p50"), 9);
    ADD_FAILURE() << "9 stages accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "box_spread_l2_all_latency_p50: 16 KiB boxes in flight per CTA, 1..8, got 9");
  }
}

// L2 latency under load (h100_loaded.csv: one SM's TMA loads while 131 stream from the L2): the
// model's L2 is a FIFO link without the arbitration silicon shows, so these rows carry wide stated
// bounds; the test pins them (no row may get worse) until that mechanism lands.
TEST(CalibrationTest, L2LatencyUnderLoadStaysWithinItsStatedBounds) {
  expect_rows_within("h100", calibration("h100_loaded.csv"), calibration("h100_loaded_tolerances.csv"), 12);
}

// HBM operand boxes by 1..132 SMs (h100_hbm_boxes.cu on each chip): the latency under load is
// hbm.loaded, fitted on these rows of each chip; the contiguous rows are within 12% but 16 SMs with
// 4 boxes in flight each (+21% / +15%), and what the wider bounds cover is an idle strided box
// (hbm_boxes_tolerances.csv).
TEST(CalibrationTest, HbmBoxRowsOfBothChipsStayWithinTheirStatedBounds) {
  for (const char* chip : {"h100", "h200"}) {
    const auto rows = expect_rows_within(chip, calibration((std::string(chip) + "_hbm_boxes.csv").c_str()),
                                         calibration("hbm_boxes_tolerances.csv"), 72);
    for (const UbenchComparison& r : rows) {
      if (r.scenario.find("_w128") == std::string::npos) continue;
      EXPECT_LE(std::abs(r.error), r.param == 16 && r.scenario.find("_s4_") != std::string::npos ? 0.21 : 0.12)
          << chip << " " << r.scenario << " " << r.param;
    }
  }
}

// Without the load term (fifo_link) the same rows leave their bounds: at 16 and 66 SMs the FIFO
// link delivers up to 70% more than silicon, so the test above can fail.
TEST(CalibrationTest, AFifoLinkHbmFailsTheBoxRows) {
  HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml", {"hbm.model=fifo_link"});
  cfg.hbm.loaded.present = false;
  const auto rows =
      compare_with_hardware(cfg, calibration("h100_hbm_boxes.csv"), calibration("hbm_boxes_tolerances.csv"));
  EXPECT_GE(std::count_if(rows.begin(), rows.end(), [](const UbenchComparison& r) { return !r.within(); }), 20);
}

// Each SM streaming its own 16 KiB A boxes (h100_gemm_loads.cu --private-a, both chips): with 6
// boxes in flight cycling through 4 hot ones an SM re-requests lines its own earlier request still
// has in flight; silicon serves each from the L2 arrays (their rate, not 1.4x it), so the model's
// coalescer joins only another SM's transfer. Every row within 10% but the H200's 66-SM row
// (loads_private_tolerances.csv; with fills at the store rows' 1.83 array bytes per byte the H200's
// HBM stream was -12.5% and the H100's HBM fast-pace row outside too: a fill costs what a read
// does, h100.yaml's l2.fill_link_cost); the H100's 66-SM row holds because 66 CTAs take one SM of every
// TPC over both L2 halves, as on silicon (with GPCs filled in turn it was -46%). The fast-pace rows
// (the 24 SMs of the short CPCs take 0.81 / 0.89 of the median SM's time with 6 boxes in flight,
// ~1.0 with 1-3) hold only with l2.cpc_load_bytes_in_flight: without it the s6 rows are 1.00.
TEST(CalibrationTest, PrivateStreamsGetTheArraysRateNotTheirOwnInFlightReads) {
  expect_both_chips("_loads_private.csv", "loads_private_tolerances.csv", 13, {0, 1});
}

// The SMEM data port (h100_smem_port.cu, run_smem_port.sh; H100 and H200 identical): one warp's
// generic ld/st.shared take 2 cycles per instruction plus their bytes at 64 B/clk (the .b32 and
// .v4 stores give both), two warps twice that, and from 4-8 warps on the SM's 128 B/clk port binds.
// Every row within 10% (the worst ld.shared.v4 with one warp, -6.6%), none outside.
TEST(CalibrationTest, TheSmsWarpsShareOneSmemPortAndEachItsOwnPath) {
  expect_both_chips("_smem_port.csv", "", 18, {0, 0});
}

// The GEMM epilogue's parts and the TMA store order (h100_epilogue.cu, run_epilogue.sh; H100 and
// H200 alike): what the phase logs (run_phase_log.sh) found the model's epilogue short of. The
// rows that one SM's write path binds are within 7%; the rest carry stated bounds with the mechanism
// each lacks (epilogue_tolerances.csv: fence.proxy.async, bar.sync, conversions between the stores,
// two warps' stores sharing the write path, a launch's first store, the L2's write rate at 132 SMs),
// so the test pins them until those land. The H100's file also has the staging beside wgmma / TMA
// traffic and what a TMA store costs its thread (the H200 was not lent when they were measured).
std::size_t outside_target(const std::vector<UbenchComparison>& rows) {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const UbenchComparison& r) { return std::abs(r.error) > 0.10; }));
}

TEST(CalibrationTest, TheEpiloguePartsStayWithinTheirStatedBounds) {
  const std::string bounds = calibration("epilogue_tolerances.csv");
  EXPECT_EQ(outside_target(expect_rows_within("h100", calibration("h100_epilogue.csv"), bounds, 129)), 74u);
  EXPECT_EQ(outside_target(expect_rows_within("h200", calibration("h200_epilogue.csv"), bounds, 82)), 49u);
}

// The SMEM beside other units (h100_epilogue.csv "epilogue_bg_*", one SM): a warpgroup's epilogue
// staging takes 142 cycles a chunk alone, 268 beside back-to-back wgmma.m64n256k16 SS, 212 beside
// the RS form and 221 beside 8 KiB TMA loads; its stores alone 70, 160 and 138. hw/sm/SmemBackground
// holds each within 10% (the port serving ld/st.shared alone gave 151 / 64 beside all of them).
TEST(CalibrationTest, TheEpilogueStagingSharesTheSmemWithWgmmaAndTmaLoads) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  const std::set<std::string> held = {"none_staging", "none_st",          "wgmma256_staging",  "wgmma256_st",
                                      "wgmma256rs_staging", "wgmma256rs_st", "tma_store_staging", "tma_load_staging"};
  std::size_t checked = 0;
  for (const UbenchComparison& r : compare_with_hardware(cfg, calibration("h100_epilogue.csv"), "")) {
    constexpr std::string_view kPrefix = "epilogue_bg_", kSuffix = "_cycles_per_chunk_x100";
    if (!r.scenario.starts_with(kPrefix) || !r.scenario.ends_with(kSuffix)) continue;
    const std::string what = r.scenario.substr(kPrefix.size(), r.scenario.size() - kPrefix.size() - kSuffix.size());
    if (!held.contains(what)) continue;
    EXPECT_LE(std::abs(r.error), 0.10) << r.scenario << ": measured " << r.measured << ", predicted " << r.predicted;
    ++checked;
  }
  EXPECT_EQ(checked, held.size());
}

// The CPC load gate's depth sweep (run_cpc_depth.sh, both chips): the short CPCs' SMs keep the
// median pace up to 64 KiB in flight per SM and fall to 0.72-0.76 of it by 128 KiB with 16 and 32
// KiB boxes, which one limit per chip (l2.cpc_load_bytes_in_flight) holds within 8% on every such
// row; outside: the 8 KiB boxes that silicon streams at one pace at every depth (and, with fills
// at 1.85 array bytes per byte, the H100's private HBM stream at 96-128 KiB; within 10% at 1.0;
// the H200's at 96 KiB +10.0% since dies.promotion_request_share, +10.2% before, +9.1% before the
// CPCs took every third TPC) (cpc_depth_tolerances.csv). Without the gate every row is ~1.00.
TEST(CalibrationTest, ShortCpcsStreamFasterOnlyPastTheirShareOfTheLimit) {
  expect_both_chips("_cpc_depth.csv", "cpc_depth_tolerances.csv", 23, {3, 3});
}

// The 2-stage scaling series' loads without math (h100_gemm_loads.cu, run_loads_scaling.sh, both
// chips): 8 of 12 rows within 10% on the H100 and 10 on the H200; the others have their reasons and
// bounds in gemm_loads_tolerances.csv (the model too fast: the shared hot B at 64 KiB in flight per
// SM, 4 stages at 16 SMs; too slow: the H100's 2-stage A + cold B at 132 SMs).
TEST(CalibrationTest, GemmLoadsRowsStayWithinTheirStatedBounds) {
  expect_both_chips("_gemm_loads_scaling.csv", "gemm_loads_tolerances.csv", 12, {4, 2});
}

// All-SM streams of 32 KiB L2-resident boxes at 1-6 in flight (h100_units2.cu --stream-depths,
// both chips): distinct lines within 8% at every depth, the L2 arrays' rate; every SM reading
// the same lines reaches the delivery rate at 4 boxes (H100) or 3 (H200), which the model holds
// within 1%, and below it is up to 47% fast (stream_depths_tolerances.csv).
TEST(CalibrationTest, StreamDepthRowsStayWithinTheirStatedBounds) {
  expect_both_chips("_stream_depths.csv", "stream_depths_tolerances.csv", 12, {3, 2});
}

// A GEMM mainloop's memory side (h100_stage_ring.cu, both chips: 2 or 4 stages of an HBM A box and/or
// an L2-resident B box every SM reads, a 1024-cycle MMA clock): every row within 10% but the 2-stage
// A+B ring at 132 SMs (H100 -21.9%, H200 -22.4%), where the first reader's miss of the cold shared B
// queues behind the SMs' A misses (stage_ring_tolerances.csv, h100_stage_parts.csv). Those rows were
// -41% while a TMA request reached the L2 when it was issued rather than when the unit started it,
// and -7.4% / -14.5% while a partition kept copies of the lines the promotion brought from the other.
TEST(CalibrationTest, StageRingRowsStayWithinTheirStatedBounds) {
  expect_both_chips("_stage_ring.csv", "stage_ring_tolerances.csv", 24, {1, 1});
}

// 132 SMs streaming one shared ring, SM c starting STEP boxes after SM c - 1 (h100_shared_offsets.csv,
// h100_units2.cu --shared-offsets): in step (STEP 0) the coalesced rate, within 10%; apart (STEP 2,
// 4, 8), silicon streams at about the distinct rate, and so does the model since a read joins only
// its GPC's transfer within the join window (l2.join_scope, l2.join_window_cycles). Before, with
// any SM's transfer joinable while in flight, its SMs fell into convoys that shared every fill:
// +105% / +117% / +159%, which the second half of the test shows.
TEST(CalibrationTest, SmsReadingOneRingApartStreamAtTheDistinctRate) {
  const auto rows = expect_rows_within("h100", calibration("h100_shared_offsets.csv"),
                                       calibration("shared_offsets_tolerances.csv"), 6);
  for (std::size_t i : {0, 3, 4}) EXPECT_LE(std::abs(rows[i].error), 0.10) << rows[i].param;
  ASSERT_EQ(rows[2].param, 2u);
  EXPECT_LT(rows[2].error, 0.15);
  HardwareConfig chip_wide = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  chip_wide.l2.join_within_gpc = false;
  chip_wide.l2.join_window_cycles = 0;
  chip_wide.l2.join_queue_share = 0;
  const auto convoys = compare_with_hardware(chip_wide, calibration("h100_shared_offsets.csv"), "");
  EXPECT_GT(convoys[2].error, 0.5);
}

// All-SM streams with one box of every PERIOD from HBM (<chip>_hit_miss_mix.csv): up to 1 of 3
// (H100) or 1 of 2 (H200) silicon keeps the all-hit rate (a miss is one request at the L2, like a
// hit) until HBM binds. With l2.fill_link_cost 1.0 (a fill costs the arrays what a read does) every
// row is within 5% on the H100 (4.8% at 1 of 2 since l2.page_bytes, 4.0% since l2.policy set_lru,
// 3.4% before) and 10% on
// the H200 (8.9% at 1 of 2), the HBM-bound
// ones included; at the store rows' cost (1.85 / 1.83, the configs' value until 2026-11-28) the
// model fell 15-21% short of the mixed rows, which the loop's second half shows.
TEST(CalibrationTest, AMissCostsTheL2OneRequestLikeAHit) {
  for (const auto& [chip, bound] : {std::pair{"h100", 0.05}, std::pair{"h200", 0.10}}) {
    const std::string csv = calibration((std::string(chip) + "_hit_miss_mix.csv").c_str());
    for (const UbenchComparison& r : expect_rows_within(chip, csv, "", 6))
      EXPECT_LE(std::abs(r.error), bound) << chip << " " << r.scenario;
    HardwareConfig fill_like_a_store = load_config(std::string(BWSIM_SOURCE_DIR "/sim_configs/") + chip + ".yaml");
    fill_like_a_store.l2.fill_link_cost = fill_like_a_store.l2.store_link_cost;
    const auto rows = compare_with_hardware(fill_like_a_store, csv, "");
    ASSERT_EQ(rows[3].scenario, "tma_stream_mix_1of3_bytes_per_ns_x100");
    EXPECT_LT(rows[3].error, -0.15) << chip;
  }
}

// L2 hits of one SM on an idle chip (h100_hit_boxes.csv, and h200_hit_boxes.csv on an H200): the row stride of a box changes nothing
// in silicon (within 4% from contiguous to 32 KiB apart, on both chips) nor in the model; the model's hits carry
// the ~83 cycles tma_2d_latency_l2's timing loop adds (hit_boxes_tolerances.csv), and a box of
// lines the previous miss promoted costs silicon 149-150 cycles more than the same box hot (128 rows
// 32 KiB apart; the H200 145-146), the model its far half's hit latency, dies.far_hit_latency (until that was
// modeled, nothing: 585 against 636, two errors that nearly cancelled).
// TMA store and reduce-add streams (h100_tma_reduce.cu on both chips): the SM's write paths
// (tma.store_bytes_per_cycle, reduce_bytes_per_cycle) and the L2's array cost of a store and of a
// reduction (l2.store_link_cost, reduce_link_cost) hold the cycles per box of every stream with
// two or more boxes in flight to L2-resident lines within 2% (the bytes-per-cycle rows of one SM
// are ~31.5, whole numbers in the comparison); what the wider bounds cover is one box in flight,
// one box alone and reductions into HBM (tma_reduce_tolerances.csv).
TEST(CalibrationTest, TmaStoreAndReduceRowsOfBothChipsStayWithinTheirStatedBounds) {
  for (const char* chip : {"h100", "h200"}) {
    const auto rows = expect_rows_within(chip, calibration((std::string(chip) + "_tma_reduce.csv").c_str()),
                                         calibration("tma_reduce_tolerances.csv"), 102);
    for (const UbenchComparison& r : rows) {
      if (r.scenario.find("_l2_p1") == std::string::npos && r.scenario.find("_l2_p") != std::string::npos &&
          r.scenario.find("cycles_per_box") != std::string::npos) {
        EXPECT_LE(std::abs(r.error), 0.02) << chip << " " << r.scenario << " " << r.param;
      }
    }
  }
}

// A full-chip store stream writes half its bytes to lines homed in the other L2 partition. The
// link between the partitions, as the H200's reads measured it (dies.link_gbytes_per_second),
// holds the stream to silicon's rate (2102 B/clk on the H100) even where a store costs the arrays
// only a read's bytes (store_link_cost 1); with the link at the crossbar's rate (the estimate
// before) that store would stream 50% faster than silicon, as the cost 1.85 was set to prevent.
TEST(CalibrationTest, TheLinkBetweenL2PartitionsHoldsFullChipStoresToSiliconsRate) {
  HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  cfg.l2.store_link_cost = 1;
  const UbenchScenario* s = find_ubench("store_l2_p2_bytes_per_cycle");
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(static_cast<double>(run_ubench(cfg, *s, 132)), 2102.0, 2102 * 0.05);
  cfg.dies.link_gbytes_per_second = 21350;
  EXPECT_GT(run_ubench(cfg, *s, 132), 2102 * 1.5);
}

TEST(CalibrationTest, HitBoxRowsStayWithinTheirStatedBounds) {
  // chip, its promoted box's measured gap to the hot one (the mean of the two delays), the config's far_hit_latency
  for (const auto& [chip, measured_gap, far_hit] : {std::tuple{"h100", 149.5, 149}, std::tuple{"h200", 145.5, 146}}) {
    const auto rows = expect_rows_within(chip, calibration((std::string(chip) + "_hit_boxes.csv").c_str()),
                                         calibration("hit_boxes_tolerances.csv"), 24);
    std::map<std::uint32_t, std::int64_t> by_rows;
    for (const UbenchComparison& r : rows) {
      if (r.scenario.rfind("tma_hit_box_latency_w", 0) != 0) continue;
      const auto [it, first] = by_rows.emplace(r.param, r.predicted);
      EXPECT_EQ(r.predicted, it->second) << chip << " " << r.scenario << " " << r.param << ": the stride changes the model's hit";
    }
    EXPECT_EQ(by_rows.size(), 4u) << chip;
    const UbenchComparison hot = row_of(rows, "tma_hit_box_latency_w32768", 128);
    for (const std::uint32_t delay : {0u, 4000u}) {
      const UbenchComparison promoted = row_of(rows, "tma_promoted_box_latency_w32768", delay);
      EXPECT_EQ(promoted.predicted - hot.predicted, far_hit) << chip << " " << delay;
      EXPECT_NEAR(static_cast<double>(promoted.measured - hot.measured), measured_gap, 1.0) << chip << " " << delay;
    }
  }
}

// A probe SM's boxes beside SMs streaming from HBM (h100_hbm_loaded.cu on two H100s, its hot
// probe in h100_l2_probe_loaded_rows.csv; both on an H200 in h200_hbm_loaded_rows.csv). Where the
// background keeps the HBM full the model's rate is silicon's within 2%, but its HBM serves requests
// in arrival order: near saturation a probe with one cold box waits out the SMs' boxes (H100, 4
// boxes per SM: 5400 cycles against silicon's 3121 / 4292; H200 at 85% of its rate: 3783 against
// 1870) while its hits never wait (585 against 1899 on the H100, 3002 on the H200). The test pins
// those gaps (hbm_loaded_tolerances.csv has the rest).
TEST(CalibrationTest, AProbeBesideASaturatedHbmWaitsInArrivalOrderInTheModel) {
  const auto tolerances = calibration("hbm_loaded_tolerances.csv");
  const auto runs = {expect_rows_within("h100", calibration("h100_hbm_loaded.csv"), tolerances, 66),
                     expect_rows_within("h100", calibration("h100_hbm_loaded_run1.csv"), tolerances, 50)};
  const auto hot = expect_rows_within("h100", calibration("h100_l2_probe_loaded_rows.csv"), tolerances, 27);
  for (const auto& rows : runs) {
    EXPECT_GT(row_of(rows, "hbm_probe_latency_s4_d0", 131).error, 0.20);
    EXPECT_LT(std::abs(row_of(rows, "hbm_probe_bg_bytes_per_cycle_x100_s4_d0", 131).error), 0.02);
  }
  EXPECT_LT(row_of(hot, "l2_probe_latency_s4_d0", 131).error, -0.50);
  EXPECT_LT(row_of(hot, "l2_probe_latency_s2_d0", 131).error, -0.40);
  EXPECT_LT(std::abs(row_of(hot, "l2_probe_latency_s1_d0", 131).error), 0.10);
  const auto h200 = expect_rows_within("h200", calibration("h200_hbm_loaded_rows.csv"), tolerances, 93);
  EXPECT_GT(row_of(h200, "hbm_probe_latency_s4_d1000", 131).error, 0.50);
  EXPECT_LT(std::abs(row_of(h200, "hbm_probe_bg_bytes_per_cycle_x100_s4_d0", 131).error), 0.02);
  EXPECT_LT(row_of(h200, "l2_probe_latency_s4_d0", 131).error, -0.70);
}

// h100_stage_parts.csv at 132 SMs: a stage of two HBM boxes (aa) is bandwidth-bound and one box
// (a) nearly so, and the model holds both within 10%. An HBM A box followed by a 32 KiB B box every
// SM reads cold (one SM misses, the rest wait on its miss): on silicon B completes after A (4502 and
// 3997 cycles after the stage's issue); issued first (ba), B completes long before A (883 and
// 2173). The first reader's B request reaches the L2 when its TMA unit has streamed A out, after
// most SMs' A requests, so its fill queues behind their misses. While the model placed a request
// at the link when it was issued, B went ahead of them (966 cycles) and the stage was 50% fast.
// The stage-parts twin's `row` (cycles per k-block or a barrier's latency) for `variant` at 132 SMs.
std::int64_t stage_parts_at_132(const HardwareConfig& cfg, const char* variant, const char* row = "cycles_per_kblock") {
  return run_ubench(cfg, *find_ubench(std::string("stage_parts_") + variant + "_" + row), 132);
}

TEST(CalibrationTest, AColdSharedBoxIssuedAfterTheMissesQueuesBehindThem) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  EXPECT_NEAR(stage_parts_at_132(cfg, "aa"), 2891, 289);
  EXPECT_NEAR(stage_parts_at_132(cfg, "a"), 1724, 172);
  // B after A: 4502 cycles on silicon; 4354 in the model until a partition stopped keeping copies
  // of the lines the 256B promotion brought from the other (2026-11-29), 3400 since (-24%), 3176
  // (-29.5%) since a far read with that promotion sends traffic back across (dies.promotion_request_share).
  const std::int64_t a_then_b = stage_parts_at_132(cfg, "ab", "bar1_even_latency");
  EXPECT_NEAR(a_then_b, 4502, 4502 * 0.3);
  EXPECT_GT(a_then_b, stage_parts_at_132(cfg, "ab", "bar0_even_latency"));
  EXPECT_LT(stage_parts_at_132(cfg, "ba", "bar0_even_latency"), stage_parts_at_132(cfg, "ba", "bar1_even_latency") / 2);
  // The stage on one barrier (3405 cycles per k-block on silicon): -33% (-21% with the promoted
  // copies, -36% with the promotion's traffic back across); what is left is the A misses
  // themselves, which take twice their lone latency beside the cold B on silicon (3997 against
  // 2071) and not in the model.
  EXPECT_NEAR(stage_parts_at_132(cfg, "ab1_quiet"), 3405, 3405 * 0.37);
}

// The stage with an HBM box and a hot box private to each SM (abp, abp1: 132 SMs, 2 stages):
// silicon 2475 / 2407 cycles per k-block (H100) and 2226 / 2174 (H200, h200_stage_parts.csv). The
// configs charged a filled line the store rows' 1.85 / 1.83 array bytes per byte, which made the
// arrays bind these rows within 10%; the hit/miss mix rows show a fill costs what a read does
// (AMissCostsTheL2OneRequestLikeAHit), and at 1.0 the model gives 1953 and 1658 (-21% / -25%). Every
// k-block here is a burst of 132 boxes from HBM, which silicon completes together and the model one
// after another (BurstBoxesCompleteInTurnInTheModel), but that is not what is missing: a local
// experiment completing a burst's boxes together moved abp by 0.3% (1953 -> 1959; README, the
// ping-pong 8192^3 row's leads). The cause is open. The test pins the gap (it fails once a
// mechanism closes it). A stage of two HBM boxes stays within 10% (HBM-bound).
TEST(CalibrationTest, APrivateHbmAndHotStageIsFastInTheModel) {
  const std::pair<const char*, std::array<std::int64_t, 3>> chips[] = {{"h100", {2475, 2407, 2891}},
                                                                        {"h200", {2226, 2174, 2175}}};
  for (const auto& [chip, measured] : chips) {
    const HardwareConfig cfg = load_config(std::string(BWSIM_SOURCE_DIR "/sim_configs/") + chip + ".yaml");
    EXPECT_LT(stage_parts_at_132(cfg, "abp"), measured[0] * 85 / 100) << chip;
    EXPECT_LT(stage_parts_at_132(cfg, "abp1"), measured[1] * 85 / 100) << chip;
    EXPECT_NEAR(stage_parts_at_132(cfg, "aa"), measured[2], measured[2] / 10) << chip;
  }
}

// The stage-parts rings at 16 SMs with their loops counting the stage and phase
// (h200_stage_parts_lean_rows.csv: h100_stage_parts.cu's lean instantiation, which the twin's program
// is; the first-measured loop divided by the run-time stage count, a median 110 cycles more per
// k-block). Where the 1024-cycle MMA clock binds (b, ab4, ab14) the model is within 6%. Where the
// stage's latency binds, the thread that waited issues its next load 93 cycles after an observer
// warp's clock at the completion (155 with a hot B after A; stage_parts_trace.py on
// h200_stage_parts_lean_trace.csv.gz), the twin ~4: those rows are 4.6-13% fast (6-13% until the
// far half's hits paid dies.far_hit_latency: ba and bha, whose B boxes other SMs read first, moved
// 1.1-1.2 points). The test pins that gap (it fails once the model charges the path, so the bounds
// get revisited with it).
TEST(CalibrationTest, TheLeanStageRingIsFastWhereItsLatencyBinds) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  const auto rows = compare_with_hardware(cfg, calibration("h200_stage_parts_lean_rows.csv"), "");
  ASSERT_EQ(rows.size(), 19u);
  const std::string_view prefix = "stage_parts_lean_", suffix = "_cycles_per_kblock";
  const std::set<std::string> clock_bound = {"b", "ab4", "ab14"};
  for (const UbenchComparison& r : rows) {
    const std::string variant = r.scenario.substr(prefix.size(), r.scenario.size() - prefix.size() - suffix.size());
    if (clock_bound.count(variant)) {
      EXPECT_LT(std::abs(r.error), 0.06) << r.scenario;
    } else {
      EXPECT_LT(r.error, -0.04) << r.scenario;
      EXPECT_GT(r.error, -0.15) << r.scenario;
    }
  }
}

// h100_hbm_burst.csv at 132 SMs on a clean L2: four boxes per SM are bandwidth-bound and the
// model's span holds within 10% of silicon's (one column: 13145 cycles; contiguous: 6799); one box
// per SM is where the model's median CTA is fast (same: silicon 4109, contiguous 2448): its links
// complete the boxes of a burst one after another, silicon's with the burst. The test pins that
// gap (it fails once a mechanism closes it, so the bounds get revisited with it).
TEST(CalibrationTest, BurstBoxesCompleteInTurnInTheModel) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  auto row = [&](const std::string& name) { return run_ubench(cfg, *find_ubench("burst_" + name), 132); };
  EXPECT_NEAR(row("span_cycles_same_r_p4"), 13145, 1315);
  EXPECT_NEAR(row("span_cycles_contiguous_r_p4"), 6799, 680);
  EXPECT_LT(row("latency_cycles_same_r_p1"), 4109 * 7 / 10);
  EXPECT_LT(row("latency_cycles_contiguous_r_p1"), 2448 * 8 / 10);
}

// How far apart a GEMM's CTAs run: the spread of the CTAs' mean tile intervals (coefficient of
// variation) and, for the CTAs that read the same A tile as their j-th tile, the median distance
// between their starts.
struct TileDrift {
  double cv = 0, same_a_tile_j5 = 0;
};
TileDrift tile_drift(const std::vector<TileStart>& starts) {
  std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, Cycle>>> by_cta;  // cta -> (j, cycle)
  std::map<std::uint32_t, std::vector<Cycle>> j5_by_m;
  for (const TileStart& s : starts) {
    by_cta[s.cta].push_back({s.j, s.cycle});
    if (s.j == 5) j5_by_m[s.m].push_back(s.cycle);
  }
  std::vector<double> means;
  for (auto& [cta, seq] : by_cta) {
    std::sort(seq.begin(), seq.end());
    if (seq.size() > 1) means.push_back(static_cast<double>(seq.back().second - seq.front().second) / (seq.size() - 1));
  }
  double sum = 0, sq = 0;
  for (double m : means) sum += m;
  const double mean = sum / means.size();
  for (double m : means) sq += (m - mean) * (m - mean);
  std::vector<double> diffs;
  for (const auto& [m, cycles] : j5_by_m)
    for (std::size_t i = 1; i < cycles.size(); ++i)
      diffs.push_back(std::abs(static_cast<double>(cycles[i]) - static_cast<double>(cycles[0])));
  std::sort(diffs.begin(), diffs.end());
  return {std::sqrt(sq / means.size()) / mean, diffs.empty() ? 0.0 : diffs[diffs.size() / 2]};
}

// The ping-pong 128 x 128 GEMMs' CTAs drift apart (h100_gemm_sm90_tiles_*.csv, gemm_sm90_twin.cu
// --tile-log): at 4096^3 silicon's CTAs' mean tile intervals spread with cv 0.045 and the CTAs
// reading one A tile in their sixth tile start it 8522 cycles apart (median). The model's stayed
// together (cv 0.001, ~250 cycles) while any SM's transfer was joinable as long as it was in flight:
// a CTA that fell behind caught up by joining the others' reads. Since reads join only within a
// GPC and a join window (l2.join_scope, l2.join_window_cycles) they drift too: cv 0.083 and 7267
// cycles (more spread than silicon's; the row +0.0%, -19.4% before); since the CPCs take every third
// TPC (sm.tpc_cpcs, as silicon's fast SMs say) 3267 cycles at j = 5, less than silicon's.
TEST(CalibrationTest, PingPongCtasDriftApartOnSiliconAndInTheModel) {
  std::vector<TileStart> silicon;
  for (const auto& row : read_csv_rows(calibration("h100_gemm_sm90_tiles_pp128_4096.csv"), 8))
    silicon.push_back({static_cast<std::uint32_t>(std::stoul(row[0])), static_cast<std::uint32_t>(std::stoul(row[1])),
                       static_cast<std::uint32_t>(std::stoul(row[2])), static_cast<std::uint32_t>(std::stoul(row[3])),
                       static_cast<std::uint32_t>(std::stoul(row[4])), static_cast<std::uint32_t>(std::stoul(row[5])),
                       static_cast<Cycle>(std::stoll(row[7]))});
  ASSERT_EQ(silicon.size(), 1024u);
  const TileDrift measured = tile_drift(silicon);
  EXPECT_GT(measured.cv, 0.04);
  EXPECT_GT(measured.same_a_tile_j5, 5000);

  HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml", {"clock_ghz=1.585"});
  GemmSm90Params p{.m = 4096, .n = 4096, .k = 4096, .schedule = Sm90Schedule::Pingpong, .rows_per_wg = 128,
                   .tile_n = 128, .stages = 6};
  p.log_tiles = true;
  const GemmSm90Result r = run_gemm_sm90(cfg, SimOptions{.mode = Mode::Timing, .check_races = false}, p, false);
  ASSERT_EQ(r.tile_starts.size(), 1024u);
  const TileDrift model = tile_drift(r.tile_starts);
  EXPECT_GT(model.cv, 0.04);
  EXPECT_LT(model.cv, 0.1);
  EXPECT_GT(model.same_a_tile_j5, 1500);  // 2020 since promoted lines stay in their home partition (3267 before)
}

// The L2's room for data all SMs read (132 SMs reading F MiB, DRAM bytes per pass as a share of F;
// h100_l2_partitions.csv's shared and split rows, under ncu's application replay: the 8-24 MiB
// values of h100_l2_footprint.csv are a kernel-replay artefact). Silicon holds a footprint every SM
// reads only up to one partition's 25 MiB (2 / 483 / 876 at 24 / 28 / 32 MiB) and one split among
// the SMs further (1 at 32, 44 at 40, 91 at 48). h100.yaml's two L2 halves put both knees in place;
// one unified 50 MiB L2 holds the shared footprint to 48 MiB, which the second half of the test
// shows fails.
TEST(CalibrationTest, TheH100L2HoldsDataEverySmReadsOnlyUpToOnePartition) {
  const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  const UbenchScenario& shared = *find_ubench("l2_footprint_shared_hbm_per_pass_x100");
  const UbenchScenario& split = *find_ubench("l2_footprint_split_hbm_per_pass_x100");
  EXPECT_EQ(run_ubench(h100, shared, 20), 0);      // silicon 0
  EXPECT_GE(run_ubench(h100, shared, 28), 80);     // silicon 483
  EXPECT_GE(run_ubench(h100, shared, 32), 100);    // silicon 876
  EXPECT_LT(run_ubench(h100, split, 32), 40);      // silicon 1
  EXPECT_GE(run_ubench(h100, split, 48), 85);      // silicon 91
  HardwareConfig unified = h100;
  unified.dies.count = 1;
  EXPECT_EQ(run_ubench(unified, shared, 32), 0);
}

// A measured CSV's rows (scenario,param,value) by scenario and param.
std::map<std::pair<std::string, std::uint32_t>, std::int64_t> scenario_values(const std::string& csv) {
  std::map<std::pair<std::string, std::uint32_t>, std::int64_t> values;
  for (const auto& row : read_csv_rows(csv, 3))
    values[{row[0], static_cast<std::uint32_t>(std::stoul(row[1]))}] = std::stoll(row[2]);
  return values;
}

// Pairs of SMs reading one cold stream, the follower L boxes of 16 KiB behind its leader
// (<chip>_l2_partitions.csv's lag rows: DRAM bytes over the leaders' x 100, 100 while the follower
// hits): silicon's follower loses lines gradually (H200: 104 / 119 / 145 / 171 / 187 at L = 8 /
// 12 / 16 / 20 / 24, the same within a point on a fourth H200), while one footprint of whole pages
// read in turn (half0) has a sharp knee (4 / 55 / 96 at 28 / 32 / 36 MiB). Sets whose pages sit in
// scattered frames (l2.page_bytes, hw/memory/L2SetIndex) give both within 10 and 25 points; the
// XOR-folded sets of 60 ways the H200 had before (2026-11-29) kept every line up to L = 16 and then
// almost none (100 at 16, 185 at 20). The H100's silicon loses from L = 2 on (133 at 8, 155 at 12),
// the model's 25-way sets from 10 (100 at 8, 117 at 12): within 40 points.
TEST(CalibrationTest, TheL2LosesALaggingReadersLinesGraduallyAndAFootprintOfWholePagesSharply) {
  const HardwareConfig h200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  const HardwareConfig folded = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml", {"l2.page_bytes=0", "l2.ways=64"});
  const auto silicon = scenario_values(calibration("h200_l2_partitions.csv"));
  const std::string lag = "l2_partitions_lag_same_hbm_per_pass_x100", half = "l2_partitions_half0_hbm_per_pass_x100";
  ASSERT_EQ(silicon.at({lag, 16}), 145);
  for (const std::uint32_t l : {8u, 12u, 16u, 20u, 24u})
    EXPECT_NEAR(run_ubench(h200, *find_ubench(lag), l), silicon.at({lag, l}), 10) << l;
  for (const std::uint32_t f : {28u, 32u, 36u, 40u})
    EXPECT_NEAR(run_ubench(h200, *find_ubench(half), f), silicon.at({half, f}), 25) << f;
  EXPECT_EQ(run_ubench(folded, *find_ubench(lag), 16), 100);
  EXPECT_GE(run_ubench(folded, *find_ubench(lag), 20), 180);
  const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  const auto h100_silicon = scenario_values(calibration("h100_l2_partitions.csv"));
  ASSERT_EQ(h100_silicon.at({lag, 8}), 133);
  for (const std::uint32_t l : {4u, 8u, 12u, 16u, 20u})
    EXPECT_NEAR(run_ubench(h100, *find_ubench(lag), l), h100_silicon.at({lag, l}), 40) << l;
}

// The same lag rows with the pairs' streams interleaved box by box in one region
// (h200_l2_lag_interleaved.csv, a fifth H200, measured after the model's pages were chosen and
// not fitted to): the lines read between a leader and its follower are then whole pages, which
// fill the sets evenly, and silicon loses them later and more sharply (100 / 101 / 105 / 125 / 183 at
// L = 10 / 12 / 14 / 16 / 20, against 107 / 120 / 128 / 145 / 170 six MiB apart in the same run).
// The model, its config fixed before the run, gives 100 / 100 / 101 / 106 / 186, the pairs across partitions within 7
// points. XOR-folded sets lose both layouts alike (100 at 16, 185-190 at 20).
TEST(CalibrationTest, InterleavedStreamsKeepTheirLinesLongerOnSiliconAndInTheModel) {
  const HardwareConfig h200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  const HardwareConfig folded = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml", {"l2.page_bytes=0", "l2.ways=64"});
  const auto silicon = scenario_values(calibration("h200_l2_lag_interleaved.csv"));
  const std::string lag = "l2_partitions_lag_same_hbm_per_pass_x100";
  for (const std::string mode : {"lagi_same", "lagi_cross"}) {
    const std::string scenario = "l2_partitions_" + mode + "_hbm_per_pass_x100";
    for (const std::uint32_t l : {8u, 12u, 14u, 16u, 20u, 24u})
      EXPECT_NEAR(run_ubench(h200, *find_ubench(scenario), l), silicon.at({scenario, l}), 20) << mode << " " << l;
  }
  const std::string interleaved = "l2_partitions_lagi_same_hbm_per_pass_x100";
  for (const std::uint32_t l : {12u, 16u}) {
    ASSERT_GE(silicon.at({lag, l}), silicon.at({interleaved, l}) + 15) << l;
    EXPECT_GE(run_ubench(h200, *find_ubench(lag), l), run_ubench(h200, *find_ubench(interleaved), l) + 8) << l;
  }
  // Folded sets: every line kept in both layouts at 16, almost none at 20.
  EXPECT_EQ(run_ubench(folded, *find_ubench(lag), 16), 100);
  EXPECT_EQ(run_ubench(folded, *find_ubench(interleaved), 16), 100);
  EXPECT_GE(run_ubench(folded, *find_ubench(lag), 20), 180);
  EXPECT_GE(run_ubench(folded, *find_ubench(interleaved), 20), 180);
}

// A slice read twice and then left goes before a slice read once after it (h200_l2_reref.csv,
// H200 silicon): the L2 replaces by recency, as h200.yaml's set_lru does, not by re-reference as
// clock's second chance does (which keeps X and drops Y: 81 and 97 points off at Z = 20). Since
// pages scatter over the sets (l2.page_bytes) the model loses X gradually as silicon does; with
// XOR-folded sets of 60 ways it lost all of X at Z = 20 and 24 and none of Y.
TEST(CalibrationTest, TheH200L2DropsAnOlderTwiceReadSliceBeforeANewerOnceReadOne) {
  const HardwareConfig h200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  const HardwareConfig clock = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml", {"l2.policy=clock"});
  const auto silicon = scenario_values(calibration("h200_l2_reref.csv"));
  const std::string x = "l2_partitions_reref_x_hbm_per_pass_x100", y = "l2_partitions_reref_y_hbm_per_pass_x100";
  ASSERT_EQ(silicon.at({x, 20}), 81);
  ASSERT_EQ(silicon.at({y, 20}), 3);
  for (const std::uint32_t z : {16u, 20u, 24u}) {
    const std::int64_t lost_x = run_ubench(h200, *find_ubench(x), z), lost_y = run_ubench(h200, *find_ubench(y), z);
    EXPECT_NEAR(lost_x, silicon.at({x, z}), 25) << z;  // 34 / 58 / 97 (silicon 53 / 81 / 89)
    EXPECT_NEAR(lost_y, silicon.at({y, z}), 25) << z;  // 0 / 2 / 3 (silicon 0 / 3 / 19)
    EXPECT_GT(lost_x, lost_y + 30) << z;
  }
  EXPECT_EQ(run_ubench(clock, *find_ubench(x), 20), 0);
  EXPECT_EQ(run_ubench(clock, *find_ubench(y), 20), 100);
}

// CUDA-core units and the softmax twin (h100_cudacore.csv): chains and streams of one opcode, the
// issue limit, and the twin's compiled row tile (from softmax_sass.txt) at 1 and 2 warps per
// sub-partition, all within the 10% target.
TEST(CalibrationTest, CudaCoreUnitsAndTheSoftmaxTwinAreWithinTenPercent) {
  const auto rows = expect_rows_within("h100", calibration("h100_cudacore.csv"), "", 32);
  for (const UbenchComparison& r : rows) EXPECT_LE(r.tolerance, 0.10) << r.scenario;
}

// The B200 from published B200 rows (SemiAnalysis): UMMA latencies exact to the cycle but one
// (2-CTA SS M=128 N=64, +8), the all-SM HBM TMA stream within 3% at saturation and within stated
// bounds below it, and the multicast/sharing sweep's iterations, 39 of 48 within 10% (the rest
// within the bounds b200_published_tolerances.csv states; 40 before each TMA request reached the L2
// in the unit's turn, with the sweep's mean error 6.8% -> 5.3%).
TEST(CalibrationTest, TheB200ConfigReproducesThePublishedB200Rows) {
  const auto rows = expect_rows_within("b200", calibration("b200_published.csv"),
                                       calibration("b200_published_tolerances.csv"), 81);
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(),
                          [](const UbenchComparison& r) { return r.scenario.starts_with("sa_umma") && r.predicted == r.measured; }),
            17);
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(),
                          [](const UbenchComparison& r) {
                            return r.scenario.starts_with("sa_tma2dmcast") && std::fabs(r.error) <= 0.10;
                          }),
            39);
}

TEST(CalibrationTest, AWrongConfigValueIsCaught) {
  // Doubling the mbarrier latencies moves the mbarrier and remote-arrive rows far outside.
  const HardwareConfig wrong = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml",
                                           {"mbarrier.arrive_latency=84", "mbarrier.wakeup_latency=84"});
  std::size_t outside = 0;
  for (const UbenchComparison& r : compare_with_hardware(wrong, kMeasured, kTolerances)) outside += r.within() ? 0 : 1;
  EXPECT_GE(outside, 2u);
}

TEST(CalibrationTest, TheCommandLinePrintsTheTableAndExitsNonZeroOutsideTolerance) {
  const std::string args = std::string("compare ") + kMeasured + " --config " BWSIM_SOURCE_DIR
                           "/sim_configs/h100.yaml --tolerances " + kTolerances;
  const test::Outcome ok = test::bwsim(args);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("89 of 89 rows within tolerance"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("tma_2d_latency_hbm"), std::string::npos) << ok.output;
  const test::Outcome bad = test::bwsim(args + " --set tma.load_latency=600");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("OUTSIDE"), std::string::npos) << bad.output;
}

TEST(CalibrationTest, BadParamsAndBadCsvRowsAreClearErrors) {
  const std::string ubench = "run ubench --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --scenario ";
  test::expect_bad_input(ubench + "tma_stream_all_sms_l2_bytes_per_cycle_x100", "whole 32 KiB boxes");
  test::expect_bad_input(ubench + "tma_2d_latency_hbm --size 200", "a multiple of 128 in 128..32768, got 200");
  const std::string csv = ::testing::TempDir() + "bad.csv";
  std::ofstream(csv) << "scenario,param,cycles\nmbarrier_same_thread,abc,92\n";
  test::expect_bad_input("compare " + csv + " --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml",
                         "bad.csv:2 param must be an integer");
}

}  // namespace
}  // namespace bwsim

// Whole kernels: gemm_sm90 against its CUDA twin on the H100 and, with a config derived from H200
// unit rows only, on the H200. The target is every row within 10% and a mean error under
// 5%; the rows not there yet are in gemm_sm90_tolerances.csv with the mechanism each lacks, so this
// pins today's state: no row may get worse than its stated bound, nor the mean error.
namespace bwsim {
namespace {

constexpr const char* kGemmTolerances = BWSIM_SOURCE_DIR "/tools/calibration/gemm_sm90_tolerances.csv";

// `csv` (default <chip>_gemm_sm90.csv) against sim_configs/<chip>.yaml: every row within its bound,
// `outside` of them outside the 10%, the mean error within `mean_bound`.
void expect_gemm_rows(const char* chip, double mean_bound, std::size_t outside, const std::string& csv = "") {
  const HardwareConfig cfg = load_config(std::string(BWSIM_SOURCE_DIR "/sim_configs/") + chip + ".yaml");
  const auto rows = compare_gemm_sm90_with_hardware(
      cfg, std::string(BWSIM_SOURCE_DIR "/tools/calibration/") + (csv.empty() ? std::string(chip) + "_gemm_sm90.csv" : csv),
      kGemmTolerances);
  EXPECT_EQ(rows.size(), 14u);
  for (const KernelComparison& r : rows) {
    EXPECT_TRUE(r.within()) << chip << " " << r.shape << " " << r.variant << ": measured " << r.measured
                            << ", predicted " << r.predicted << " (" << 100 * r.error << "%)";
    if (r.tolerance > 0.10 || r.draws > 1) {
      EXPECT_FALSE(r.reason.empty()) << r.shape;
    }
  }
  EXPECT_LE(mean_absolute_error(rows), mean_bound) << chip;
  EXPECT_EQ(static_cast<std::size_t>(
                std::count_if(rows.begin(), rows.end(), [](const KernelComparison& r) { return std::abs(r.error) > 0.10; })),
            outside)
      << chip << " " << csv;
}

// Mean errors 2.2% and 2.9%, every row of both within 10%, since the chaotic ping-pong 8192^3 row
// is the upper median of 10 launches after the warm-up, the twin's own statistic (-9.0% / -7.4%,
// the draws -14.4..-3.7% / -10.0..-0.8%); 2.2% and 3.0% with 5 (-7.9% / -9.4%), each launch its
// own draw with the SMs' starts skewed within the measured dispatch spread
// (gemm_sm90_tolerances.csv; its one deterministic draw -11.6% / -9.8%); 2.4% and 3.1%, the H200's every row within 10% (its
// ping-pong 8192^3 draw at -9.8%, near the edge), since a far read with the 256B L2 promotion sends dies.promotion_request_share of
// its bytes back across the partitions' link (the chaotic ping-pong 8192^3 draws -18.8% / -11.1% ->
// -11.6% / -9.8%; no other row moved by more than 0.35 points); 3.0% and 3.2% since a far half's hits pay dies.far_hit_latency; mean errors 2.9% and
// 3.4% since gemm_sm90 charges its consumers' own k-block code too
// (GemmSm90Params::consumer_path_cycles, 35 cycles measured in the twin's ping-pong shapes: the
// 2-stage 4096^3 rows -6.2% / -6.9% -> -4.4% / -5.1%, the chaotic ping-pong 8192^3 draws -8.1% /
// -12.0% -> -18.9% / -14.1%); 2.5% (H100, every row within 10%) and 3.6% (H200) since it charges its producer's
// own k-block code (GemmSm90Params::producer_path_cycles, 72 cycles measured by gemm_sm90_twin --path-log:
// the 2-stage 4096^3 rows -8.1% / -8.9% -> -6.2% / -6.9%, the H200's ping-pong 64x256 4096^3 -5.5% ->
// -2.7%, the chaotic ping-pong 8192^3 draws -9.4% / -13.9% -> -8.1% / -12.0%); 3.3% and 4.4% since GMEM's pages scatter over the
// L2's sets (l2.page_bytes, h200_l2_lag_interleaved.csv) and buffers of a page or more start on a
// page (h200_alloc_alignment.csv; the H100's ping-pong 64x256 4096^3 -5.0% -> -3.0%, its ping-pong
// 8192^3 -11.8% -> -9.4%, the H200's -15.0% -> -13.9%); 3.4% and 4.5% since the L2
// replaces by recency within XOR-indexed sets (l2.policy set_lru, h200_l2_reref.csv: the H100's ping-pong 8192^3 -18.3% -> -11.8%, the
// H200's -9.8% -> -15.0%, its ping-pong 64x256 4096^3 -11.9% -> -6.1%; with exact LRU 4.1% and
// 4.0%, -18.6% / -10.8% / -3.5%); 3.9% and 4.5% since the link between the L2's partitions is measured and a
// partition keeps no copy of the lines the 256B promotion brought from the other (2026-11-29: the
// H200's ping-pong 8192^3 -17.1% -> -9.8%, its ping-pong 64x256 4096^3 -5.4% -> -11.9%, the
// H100's ping-pong 8192^3 -18.8% -> -18.3%); 4.0% and 4.6% since the CPCs take every third TPC of a GPC (sm.tpc_cpcs:
// the H200's ping-pong 8192^3 -20.4% -> -17.1%, the H100's -16.4% -> -18.8%, its ping-pong 128x128
// 4096^3 +0.0% -> -3.2%, its cooperative 256x128 +4.5% -> +1.3%); 3.8% and 4.8% before,
// with reads joined only within a GPC and a join window,
// and fills costing the arrays what a read does (the ping-pong 128x128 4096^3 row +0.0% / -8.8%,
// the chaotic ping-pong 8192^3 row's draw -16.4% / -20.4%; README, "Calibration and validation on
// Hopper silicon" (9)); 4.5% and 3.3% (the H100 reruns 4.4% and 4.3%) with the SMEM shared with
// wgmma operand reads and TMA landings, bar.sync waiting for the port and the tile index
// arithmetic (5.2% and 4.5% before them, with the epilogue's measured parts; 5.1% and 4.1% before
// those, 5.9% and 5.3% before the SM's SMEM port), much of it the ping-pong 128x128 4096^3 row and
// the chaotic ping-pong 8192^3 row's one deterministic draw (gemm_sm90_tolerances.csv gives its
// perturbed means).
TEST(KernelValidationTest, GemmSm90OnTheH100StaysWithinItsStatedBounds) { expect_gemm_rows("h100", 0.023, 0); }
TEST(KernelValidationTest, GemmSm90OnTheH200StaysWithinItsStatedBounds) { expect_gemm_rows("h200", 0.030, 0); }
// The same program on two more H100s, measured 2026-11-26: mean errors 1.9% and 2.3%, every row
// within 10% (ping-pong 8192^3 the upper median of 10 drawn launches: -3.7% / -7.2%, the draws
// -11.2..+0.6% / -14.1..-2.3%) since the chaotic row is drawn 10 times; 2.0% and 2.5% with 5
// (-4.9% / -9.9%); 2.0% and 2.6% (its one deterministic draw -4.7% / -12.5%) since a far read with the 256B promotion sends traffic back across the
// partitions' link, 2.1% and 3.1% (-6.6% / -18.6%) since a far half's hits pay
// dies.far_hit_latency, 1.9% and 3.1% since the
// consumers' k-block code is charged too (ping-pong 8192^3 -5.2% / -18.8%), 3.3% and 3.1% since the
// producer's k-block code is charged (ping-pong 8192^3 -17.9% / -18.2%, the chaotic draw moving
// against the table's), 3.6% and 2.8% since large
// buffers start on a page (ping-pong 8192^3 -11.8% / -7.2%), 4.0% and 3.5% with pages scattered
// over the L2's sets and buffers packed (-18.5% / -15.9%); 3.8% and 3.8% since the L2
// replaces by recency within sets (l2.policy set_lru, h200_l2_reref.csv; ping-pong 8192^3 -14.3% /
// -18.5%); 4.0% and 4.0% since the promoted lines stay in their home partition (ping-pong 8192^3 -17.1% / -19.7%); 3.9% and 3.6% since the
// CPCs take every third TPC (ping-pong 8192^3 -14.6% / -15.3%); 4.2% and 3.9% with reads
// joined within a GPC and a window (ping-pong 8192^3 -19.6% / -18.6%); 5.0% and 4.6% before (5.2% and
// 4.9% before the epilogue's parts, 5.2% and 6.0% before the SMEM port); the ping-pong 128x128
// rows vary most from machine to machine (4096^3: 336,388 / 329,927 / 309,881 cycles on the three).
// The H200 reruns below: mean errors 3.2% and 2.8% (ping-pong 8192^3 the upper median of 10 drawn
// launches: -8.4% / -6.2%; of 5: 3.3% and 2.9%, -9.1% / -7.4%; its one deterministic draw -6.2% / -3.3%) since the
// chaotic row is drawn.
// The same program on a second H200, measured 2026-11-29 after the model's last change (l2.policy
// set_lru): mean error 4.3%, the ping-pong 8192^3 draw -12.0% (3,019,620 cycles against the first
// H200's 3,162,910) and the 2-stage 4096^3 row -10.2% (449,648 against 443,511) outside 10%; 4.0%
// with pages scattered over the L2's sets (ping-pong 8192^3 -10.2%), 4.3% since large buffers
// start on a page (-13.9%; the bound 0.041 -> 0.044), 3.6% since the producer's k-block code is
// charged (ping-pong 8192^3 -11.1%, the 2-stage row -8.3%: within 10%), 3.4% since the consumers'
// is too (-11.1%, -6.5%), 3.2% since a far half's hits pay dies.far_hit_latency (-8.8%), 3.1% since
// a far read with the 256B promotion sends traffic back across the partitions' link (-6.2%).
// A third H200, measured 2026-11-30 after that change (nothing set from it; this bound is its own
// 2.8% with 10 draws rounded up; 2.6% with one deterministic launch): every row within 10%
// (ping-pong 8192^3 -6.2%; its one deterministic draw -3.3%); without the change 3.1%, also
// every row (-9.7%), so it does not test the change.
TEST(KernelValidationTest, GemmSm90OnTwoMoreH200sStaysWithinTheirStatedBounds) {
  expect_gemm_rows("h200", 0.033, 0, "h200_gemm_sm90_rerun.csv");
  expect_gemm_rows("h200", 0.029, 0, "h200_gemm_sm90_rerun2.csv");
}

TEST(KernelValidationTest, GemmSm90OnTwoMoreH100sStaysWithinItsStatedBounds) {
  expect_gemm_rows("h100", 0.019, 0, "h100_gemm_sm90_rerun.csv");
  expect_gemm_rows("h100", 0.023, 0, "h100_gemm_sm90_rerun2.csv");
}

// The model's HBM bytes read by a 4096^3 gemm_sm90 row after one warm-up launch (as the twin's
// ncu counts its timed launch after warm-ups).
double model_hbm_read_4096(const HardwareConfig& cfg, const std::string& schedule, const std::string& rows_per_wg,
                           const std::string& tile_n, const std::string& stages) {
  const GemmSm90Params p{.m = 4096, .n = 4096, .k = 4096,
                         .schedule = schedule == "pingpong" ? Sm90Schedule::Pingpong : Sm90Schedule::Cooperative,
                         .rows_per_wg = static_cast<std::uint32_t>(std::stoul(rows_per_wg)),
                         .tile_n = static_cast<std::uint32_t>(std::stoul(tile_n)),
                         .stages = static_cast<std::uint32_t>(std::stoul(stages)),
                         .warmup = 1};
  return static_cast<double>(
      run_gemm_sm90(cfg, SimOptions{.mode = Mode::Timing, .check_races = false}, p, false).run.memory.hbm_read_bytes);
}

// The twin's DRAM traffic on its timed launch (ncu, h100_gemm_traffic.csv) against the model's HBM
// reads after one warm-up launch, for the 4096^3 rows: five of six within 10% since GMEM's pages
// scatter over the L2's sets and large buffers start on a page (ping-pong 128x128 1.09 -> 1.01,
// ping-pong 64x256 0.94; they were 42-89% short while the L2 was one 50 MiB cache; the ping-pong
// rows read ~10x their operands on silicon); cooperative 256x128 within 26% (1.25).
TEST(KernelValidationTest, TheH100GemmsReadFromHbmWhatSiliconReadsAt4096Cubed) {
  const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  std::size_t checked = 0;
  for (const auto& row : read_csv_rows(BWSIM_SOURCE_DIR "/tools/calibration/h100_gemm_traffic.csv", 17)) {
    if (row[0] != "4096" || row[8] != "1" || row[7] != "m") continue;  // the six gemm_sm90 4096^3 rows
    const double silicon = std::stod(row[10]);
    const double model = model_hbm_read_4096(h100, row[3], row[4], row[5], row[6]);
    // Ping-pong 128x128: 1.15 with l2.cpc_load_bytes_in_flight (its CTAs drift apart more than
    // silicon's; 0.99 before), 1.05 since the CPCs take every third TPC (sm.tpc_cpcs), 1.09 with
    // set_lru, 1.01 with scattered pages; cooperative
    // 256x128 1.115 since reads join only within a GPC (1.03 before), 1.21 with every third TPC in
    // a CPC, 1.25 with the L2 replacing by recency (l2.policy set_lru); the others within 10%.
    const double bound = row[4] == "128" && row[3] == "cooperative" ? 0.26 : 0.10;
    EXPECT_NEAR(model / silicon, 1.0, bound) << row[3] << " " << row[4] << "/" << row[5] << " " << row[6] << " stages";
    ++checked;
  }
  EXPECT_EQ(checked, 6u);
}

// The same on the H200 (ncu, h200_gemm_traffic_4096.csv): the four cooperative rows within 7%
// (1.04-1.05); the ping-pong rows, whose A silicon re-reads from HBM every wave, 0.89 (128x128) and
// 1.00 (64x256) since GMEM's pages scatter over the L2's sets (l2.page_bytes) and buffers of a page
// or more start on one (0.93 and 0.99 with the pages and packed buffers, when the bound was 0.10;
// 0.12 since); 0.88 and 0.86 with
// XOR-folded sets of 60 ways (l2.policy set_lru), whose sets overflowed unevenly and kept part of A
// from wave to wave. With exact LRU 0.99 and 1.08; with clock's second chance, which keeps re-read
// lines, 0.83 and 0.55.
TEST(KernelValidationTest, TheH200GemmsReadFromHbmWhatSiliconReadsAt4096Cubed) {
  const HardwareConfig h200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  std::size_t checked = 0;
  for (const auto& row : read_csv_rows(BWSIM_SOURCE_DIR "/tools/calibration/h200_gemm_traffic_4096.csv", 12)) {
    const double silicon = std::stod(row[7]);
    EXPECT_NEAR(model_hbm_read_4096(h200, row[3], row[4], row[5], row[6]) / silicon, 1.0, row[3] == "pingpong" ? 0.12 : 0.07)
        << row[3] << " " << row[4] << "/" << row[5] << " " << row[6] << " stages";
    ++checked;
  }
  EXPECT_EQ(checked, 6u);
}

// A row the tolerances give several draws predicts the upper median of that many launches after
// the warm-up (gemm_sm90's --draws, each launch its own schedule); other rows one launch. A draw
// count outside 1..99 is bad input.
TEST(KernelValidationTest, AChaoticRowIsTheUpperMedianOfItsDraws) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  const std::string measured = ::testing::TempDir() + "draws_gemm.csv";
  std::ofstream(measured) << "m,n,k,schedule,rows_per_wg,tile_n,stages,raster,swizzle,grid,cycles,clock_mhz,span_ns,"
                             "event_ns,tflops,check\n"
                             "1024,1024,1024,cooperative,64,256,4,m,1,32,21435,1763,12160,38176,176.6,PASS\n";
  const std::string tolerances = ::testing::TempDir() + "draws_tolerances.csv";
  auto write_tolerances = [&](const char* draws) {
    std::ofstream(tolerances) << "shape,variant,tolerance,draws,reason\n1024x1024x1024,cooperative 128x256,0.10,"
                              << draws << ",test\n";
  };
  HardwareConfig at_clock = cfg;
  at_clock.clock_ghz = 1.763;
  GemmSm90Params p{.m = 1024, .n = 1024, .k = 1024, .rows_per_wg = 64, .tile_n = 256, .stages = 4, .grid = 32,
                   .warmup = 1, .draws = 3};
  const SimOptions timing{.mode = Mode::Timing, .check_races = false};
  std::vector<Cycle> spans = run_gemm_sm90(at_clock, timing, p, false).draw_spans;
  ASSERT_EQ(spans.size(), 3u);
  std::sort(spans.begin(), spans.end());
  write_tolerances("3");
  const KernelComparison drawn = compare_gemm_sm90_with_hardware(cfg, measured, tolerances).at(0);
  EXPECT_EQ(drawn.draws, 3u);
  EXPECT_EQ(drawn.predicted, static_cast<std::int64_t>(spans[1]));
  EXPECT_EQ(drawn.predicted_low, static_cast<std::int64_t>(spans.front()));
  EXPECT_EQ(drawn.predicted_high, static_cast<std::int64_t>(spans.back()));
  p.draws = 1;
  const auto plain = static_cast<std::int64_t>(run_gemm_sm90(at_clock, timing, p, false).span);
  const KernelComparison one = compare_gemm_sm90_with_hardware(cfg, measured).at(0);
  EXPECT_EQ(one.draws, 1u);
  EXPECT_EQ(one.predicted, plain);
  EXPECT_EQ(one.predicted_low, plain);
  EXPECT_EQ(one.predicted_high, plain);
  for (const char* bad : {"0", "100", "five"}) {
    write_tolerances(bad);
    try {
      compare_gemm_sm90_with_hardware(cfg, measured, tolerances);
      ADD_FAILURE() << bad << " draws accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("draws_tolerances.csv:2 draws"), std::string::npos) << e.what();
    }
  }
}

// A tensor pipe 25% slower takes both one-CTA rows (the per-SM fill rate) outside 10%.
TEST(KernelValidationTest, AWrongTensorRateIsCaughtByTheOneCtaRows) {
  const HardwareConfig wrong =
      load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml", {"wgmma.f16_flops_per_cycle=3072"});
  std::size_t one_cta = 0;
  for (const KernelComparison& r :
       compare_gemm_sm90_with_hardware(wrong, BWSIM_SOURCE_DIR "/tools/calibration/h100_gemm_sm90.csv"))
    if (r.variant.ends_with("grid 1, raster m, swizzle 1")) {
      ++one_cta;
      EXPECT_FALSE(r.within()) << r.shape << " " << r.variant << ": " << 100 * r.error << "%";
    }
  EXPECT_EQ(one_cta, 2u);
}

}  // namespace
}  // namespace bwsim
