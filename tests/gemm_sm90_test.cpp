// gemm_sm90 (the Hopper warp-specialized GEMM) on h100.yaml: the right numbers on ragged shapes
// for both schedules and both tile shapes, the persistent grid, the stage count, exact timing on
// one CTA, and its errors.
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "bwsim/kernels/GemmSm90.hpp"

namespace bwsim {
namespace {

const HardwareConfig& h100() {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  return cfg;
}

GemmSm90Result gemm(const GemmSm90Params& p, Mode mode = Mode::Functional) {
  return run_gemm_sm90(h100(), SimOptions{.mode = mode}, p, mode == Mode::Functional);
}

struct Variant {
  Sm90Schedule schedule;
  std::uint32_t rows_per_wg, tile_n, tile_m, stages;
};

class GemmSm90Variants : public testing::TestWithParam<Variant> {};

TEST_P(GemmSm90Variants, MatchesTheReferenceOnARaggedShape) {
  // 333 x 500 x 200: partial tiles in M and N and a last k-block three quarters out of bounds
  // (loads zero-fill, stores clip); a 5-CTA grid so CTAs loop over several tiles (ping-pong:
  // both warpgroups get some).
  const Variant v = GetParam();
  const GemmSm90Result r = gemm({.m = 333, .n = 500, .k = 200, .schedule = v.schedule, .rows_per_wg = v.rows_per_wg,
                                 .tile_n = v.tile_n, .grid = 5});
  ASSERT_TRUE(r.checked);
  EXPECT_TRUE(r.matches) << r.detail;
  EXPECT_EQ(r.tile_m, v.tile_m);
  EXPECT_EQ(r.stages, v.stages);
  EXPECT_EQ(r.tiles, ((333 + v.tile_m - 1) / v.tile_m) * ((500 + v.tile_n - 1) / v.tile_n));
  EXPECT_EQ(r.run.ctas, 5u);
}

// Stages as the twin sizes them: the most with S * (BM + BN) * 128 + 32 KiB of epilogue buffers
// + barriers under 232448 bytes: 48 KiB stages -> 4, 32 KiB (ping-pong 128 x 128) -> 6.
INSTANTIATE_TEST_SUITE_P(Schedules, GemmSm90Variants,
                         testing::Values(Variant{Sm90Schedule::Cooperative, 64, 256, 128, 4},
                                         Variant{Sm90Schedule::Cooperative, 128, 128, 256, 4},
                                         Variant{Sm90Schedule::Pingpong, 128, 128, 128, 6},
                                         Variant{Sm90Schedule::Pingpong, 64, 256, 64, 4}),
                         [](const auto& info) {
                           return std::string(info.param.schedule == Sm90Schedule::Pingpong ? "Pingpong" : "Cooperative") +
                                  std::to_string(info.param.tile_m) + "x" + std::to_string(info.param.tile_n);
                         });

TEST(GemmSm90, OneCtaRunsTheTensorPipeBackToBack) {
  // One 128 x 256 tile, K = 64 k-blocks: each k-block is 4 k-steps of one m64n256k16 per consumer
  // warpgroup, 2 x 4 x 128 = 1024 pipe cycles, so the mainloop is 64 x 1024 cycles once the
  // first stage lands; the wgmma count is exact.
  const GemmSm90Result r = gemm({.m = 128, .n = 256, .k = 64 * 64, .grid = 1}, Mode::Timing);
  EXPECT_EQ(r.run.wgmma.mmas, 64u * 4 * 2);
  EXPECT_EQ(r.run.wgmma.busy_cycles, 64u * 1024);
  EXPECT_GT(r.run.mma_busy_fraction(), 0.9);
  EXPECT_LT(r.span, r.run.cycles);  // the span starts at the first CTA, after the launch latency
}

TEST(GemmSm90, TheLoopsOwnCodeDelaysEachKBlock) {
  // One tile on one CTA: the producer's waits for empty stages return at once, so with two k-blocks
  // their loads go out producer_path_cycles apart (the twin's code up to the loads, 72 by default)
  // plus the issue slots between, and with one k-block the path delays the whole chain (loads,
  // wgmmas, epilogue) by exactly its length.
  auto run = [](Cycle path, std::uint32_t k) {
    GemmSm90Params p{.m = 128, .n = 256, .k = k, .grid = 1, .log_tiles = true, .log_kblocks = true};
    p.producer_path_cycles = path;
    return run_gemm_sm90(h100(), SimOptions{.mode = Mode::Timing}, p, false);
  };
  auto kblock_gap = [&](Cycle path) {
    const GemmSm90Result r = run(path, 128);
    EXPECT_EQ(r.tile_starts.size(), 2u);
    return r.tile_starts.at(1).cycle - r.tile_starts.at(0).cycle;
  };
  EXPECT_EQ(GemmSm90Params{}.producer_path_cycles, 72u);
  // The gap beside the path: the first k-block's two TMA issues, and the second's acquire (its
  // try_wait and arrive.expect_tx, an issue slot each).
  EXPECT_EQ(kblock_gap(72), 72u + 2 * h100().tma.issue_cycles + 2 * h100().warp.issue_cycles);
  EXPECT_EQ(kblock_gap(572) - kblock_gap(72), 500u);
  EXPECT_EQ(run(572, 64).run.cycles - run(72, 64).run.cycles, 500u);
  // A consumer's code from its full barrier's wait to its first wgmma (35 by default) delays the
  // one k-block's wgmmas, and so the run, by exactly its length.
  auto consumer_run = [](Cycle path) {
    GemmSm90Params p{.m = 128, .n = 256, .k = 64, .grid = 1};
    p.consumer_path_cycles = path;
    return run_gemm_sm90(h100(), SimOptions{.mode = Mode::Timing}, p, false).run.cycles;
  };
  EXPECT_EQ(GemmSm90Params{}.consumer_path_cycles, 35u);
  EXPECT_EQ(consumer_run(535) - consumer_run(35), 500u);
}

TEST(GemmSm90, TheOperandsL2PromotionReachesTheirMaps) {
  // One 128x256 tile with K = 128: rows 256 bytes apart, read as two k-blocks of 128 bytes. With
  // 256B promotion the first k-block's fetch brings the second's lines, whose boxes (A 16 KiB, B
  // 32 KiB) then hit; with 128B (the twin's --promotion 128) every byte misses. The HBM reads the
  // operands once either way.
  auto memory = [](L2Promotion promotion) {
    GemmSm90Params p{.m = 128, .n = 256, .k = 128, .grid = 1};
    p.l2_promotion = promotion;
    return run_gemm_sm90(h100(), SimOptions{.mode = Mode::Timing}, p, false).run.memory;
  };
  EXPECT_EQ(GemmSm90Params{}.l2_promotion, L2Promotion::B256);
  const MemoryStats wide = memory(L2Promotion::B256), narrow = memory(L2Promotion::B128);
  EXPECT_EQ(wide.l2_read_bytes, 2u * (16384 + 32768));
  EXPECT_EQ(wide.l2_hit_bytes, 16384u + 32768);
  EXPECT_EQ(narrow.l2_hit_bytes, 0u);
  EXPECT_EQ(wide.hbm_read_bytes, narrow.hbm_read_bytes);
  EXPECT_EQ(narrow.hbm_read_bytes, 2u * (16384 + 32768));
  // The command line's --l2-promotion reaches the maps too (gemm_clocks.py --model relies on it).
  const test::Outcome o = test::bwsim("run gemm_sm90 --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/h100.yaml --m 128 --n 256 --k 128 --grid 1 --l2-promotion 128 --json");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("\"l2_hit_bytes\":0,"), std::string::npos) << o.output;
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --l2-promotion 200",
                         "--l2-promotion: expected 128 or 256, got 200");
}

TEST(GemmSm90, TimingModeTakesTheSameCycles) {
  const GemmSm90Params p{.m = 256, .n = 512, .k = 256, .schedule = Sm90Schedule::Pingpong, .rows_per_wg = 128,
                         .tile_n = 128, .grid = 3};
  EXPECT_EQ(gemm(p).run.cycles, gemm(p, Mode::Timing).run.cycles);
}

// --draws 4: four measured launches after the warm-up, each its own draw (SM starts skewed within
// the 74-cycle dispatch spread, the seed 1 stream mixed with the launch's index); the result is
// the launch at the upper median of spans (the third of four), its run that launch's. The first
// draw is the launch --perturb 1 with that skew measures alone, after a warm-up or without one.
TEST(GemmSm90, SeveralDrawsAreLaunchesOfTheirOwnAndTheResultTheirUpperMedian) {
  GemmSm90Params p{.m = 1024, .n = 1024, .k = 1024, .grid = 32, .warmup = 1, .draws = 4};
  const GemmSm90Result drawn = gemm(p, Mode::Timing);
  ASSERT_EQ(drawn.draw_spans.size(), 4u);
  std::vector<Cycle> sorted = drawn.draw_spans;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LT(sorted[1], sorted[2]);  // the skews move the span; the upper median is not the lower
  EXPECT_EQ(drawn.span, sorted[2]);
  const WarpSpan median = warp_span(drawn.run);
  EXPECT_EQ(median.end - median.begin, drawn.span);  // the reported run is the median launch
  const SimOptions seed1{.mode = Mode::Timing, .perturb_seed = 1, .perturb_sm_skew = kDispatchSpreadCycles};
  for (const std::uint32_t warmup : {1u, 0u}) {
    p.warmup = warmup;
    p.draws = 2;
    const Cycle of_two = run_gemm_sm90(h100(), SimOptions{.mode = Mode::Timing}, p, false).draw_spans[0];
    p.draws = 1;
    EXPECT_EQ(run_gemm_sm90(h100(), seed1, p, false).span, of_two) << warmup;
  }
  const GemmSm90Result plain = gemm(p, Mode::Timing);
  EXPECT_EQ(plain.draw_spans, std::vector<Cycle>{plain.span});
  EXPECT_THROW(gemm({.draws = 0}), InputError);
  EXPECT_THROW(gemm({.draws = 2, .log_tiles = true}), InputError);  // a log is of one launch
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --draws 100", "--draws");
}

TEST(GemmSm90, RejectsWhatItCannotRun) {
  EXPECT_THROW(run_gemm_sm90(test::b200_config(), SimOptions{}, {}, false), InputError);  // no wgmma on SM100
  EXPECT_THROW(gemm({.rows_per_wg = 96}), InputError);
  EXPECT_THROW(gemm({.tile_n = 96}), InputError);
  EXPECT_THROW(gemm({.rows_per_wg = 128, .tile_n = 256}), InputError);  // 256 accumulator registers
  EXPECT_THROW(gemm({.stages = 5}), InputError);                         // 5 x 48 KiB do not fit
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --schedule fast",
                         "--schedule: expected cooperative or pingpong");
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml", "has no wgmma");
}

// One CTA over four 128 x 128 tiles (raster M: tile t is (t % 2, t / 2)): one row per tile, in the
// CTA's order. Six stages and eight k-blocks a tile: tile j + 1's first load (load 8 (j + 1))
// reuses the stage of tile j's k-block 2 and waits for its release, so each start is later.
TEST(GemmSm90, TheTileLogHasEveryTileInTheCtasOrder) {
  GemmSm90Params p{.m = 256, .n = 256, .k = 8 * 64, .schedule = Sm90Schedule::Pingpong, .rows_per_wg = 128,
                   .tile_n = 128, .grid = 1};
  p.log_tiles = true;
  const GemmSm90Result r = gemm(p, Mode::Timing);
  ASSERT_EQ(r.tile_starts.size(), 4u);
  for (std::uint32_t j = 0; j < 4; ++j) {
    const TileStart& s = r.tile_starts[j];
    EXPECT_EQ(s.cta, 0u);
    EXPECT_EQ(s.j, j);
    EXPECT_EQ(s.tile, j);
    EXPECT_EQ(s.m, j % 2);
    EXPECT_EQ(s.n, j / 2);
    if (j > 0) {
      EXPECT_GT(s.cycle, r.tile_starts[j - 1].cycle);
    }
  }
  EXPECT_TRUE(gemm({.m = 256, .n = 256, .k = 512, .grid = 1}, Mode::Timing).tile_starts.empty());  // not asked
}

// The same CTA's phases: ping-pong warpgroup g takes tiles g, g + 2, so each logs two, in turn: a
// mainloop starts after the other warpgroup's (the mma_turn order), and each tile's epilogue
// follows its mainloop. Cooperative: both warpgroups log every tile, with the same mainloop start.
TEST(GemmSm90, ThePhaseLogHasEachWarpgroupsTilesInOrder) {
  GemmSm90Params p{.m = 256, .n = 256, .k = 8 * 64, .schedule = Sm90Schedule::Pingpong, .rows_per_wg = 128,
                   .tile_n = 128, .grid = 1};
  p.log_phases = true;
  GemmSm90Result r = gemm(p, Mode::Timing);
  ASSERT_EQ(r.tile_phases.size(), 4u);
  std::vector<TilePhases> by_start = r.tile_phases;
  std::sort(by_start.begin(), by_start.end(), [](const TilePhases& x, const TilePhases& y) { return x.ml_start < y.ml_start; });
  for (std::uint32_t i = 0; i < 4; ++i) {
    const TilePhases& t = by_start[i];
    EXPECT_EQ(t.wg, i % 2) << i;  // the warpgroups alternate
    EXPECT_EQ(t.j, i / 2) << i;
    EXPECT_LT(t.ml_start, t.ml_end);
    EXPECT_LT(t.ml_end, t.epi_end);
    if (i > 0) {
      EXPECT_GE(t.ml_start, by_start[i - 1].ml_start + 8 * 512);  // 8 k-blocks of 128x128x64 at the tensor pipe's rate
    }
  }
  p.schedule = Sm90Schedule::Cooperative;
  p.rows_per_wg = 64;
  r = gemm(p, Mode::Timing);
  ASSERT_EQ(r.tile_phases.size(), 8u);  // 2 x 2 tiles of 128 x 128 ... logged by both warpgroups
  // Each tile's epilogue chunks (--chunk-log): two of 64 columns, each step after the one before,
  // the first after the tile's coordinates (two u32 divisions, warp.udiv_latency 65 on h100.yaml).
  for (const TilePhases& t : r.tile_phases) {
    ASSERT_EQ(t.chunk_count, 2u);
    EXPECT_LE(t.ml_end, t.epi_start);
    EXPECT_GE(t.chunks[0].waited, t.epi_start + 2 * 65);
    for (std::uint32_t i = 0; i < t.chunk_count; ++i) {
      const TilePhases::Chunk& c = t.chunks[i];
      EXPECT_LE(c.waited, c.synced);
      EXPECT_LT(c.synced, c.staged);
      EXPECT_LE(c.staged, c.issued);
      if (i > 0) {
        EXPECT_LE(t.chunks[i - 1].issued, c.waited);
      }
    }
    EXPECT_LE(t.chunks[1].issued, t.epi_end);
  }
}

TEST(GemmSm90, TheCommandLineWritesTheTileLog) {
  const std::string path = testing::TempDir() + "gemm_sm90_tiles.csv";
  const test::Outcome o = test::bwsim("run gemm_sm90 --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/h100.yaml --m 512 --n 512 --k 256 --grid 2 --tile-log " + path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  std::ifstream f(path);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(f, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u + 8);  // clock comment, header, 4 x 2 tiles of 128 x 256
  EXPECT_EQ(lines[0], "# clock_mhz,1980");
  EXPECT_EQ(lines[1], "cta,smid,j,tile,m,n,start_ns,start_cycles");
  EXPECT_EQ(lines[2].substr(0, 10), "0,0,0,0,0,");  // CTA 0 on SM 0 starts tile 0 (0, 0) first
  test::expect_bad_input("run gemm_sm90 --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --tile-log /no/such/dir/x.csv",
                         "--tile-log: cannot write /no/such/dir/x.csv");
}

TEST(GemmSm90, TheKBlockLogHasARowPerKBlock) {
  const std::string path = testing::TempDir() + "gemm_sm90_kblocks.csv";
  const test::Outcome o = test::bwsim("run gemm_sm90 --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/h100.yaml --m 512 --n 512 --k 256 --grid 2 --kb-log 1 --tile-log " +
                                      path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  std::ifstream f(path);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(f, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u + 8 * 4);  // 8 tiles of 4 k-blocks (K 256 / 64)
  EXPECT_EQ(lines[1], "cta,smid,j,tile,m,n,kb,start_ns,start_cycles");
  EXPECT_EQ(lines[2].substr(0, 12), "0,0,0,0,0,0,");  // CTA 0, SM 0, tile 0 (0, 0), k-block 0
  EXPECT_EQ(lines[3].substr(0, 12), "0,0,0,0,0,0,");
  EXPECT_EQ(lines[3].substr(12, 2), "1,");            // then its k-block 1
}

TEST(GemmSm90, TheCommandLinePrintsCyclesTimeAndTflops) {
  const test::Outcome o = test::bwsim("run gemm_sm90 --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/h100.yaml --m 512 --n 512 --k 512 --json");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  for (const char* key : {"\"cycles\"", "\"us\"", "\"tflops\"", "\"span_cycles\"", "\"wgmma\""})
    EXPECT_NE(o.output.find(key), std::string::npos) << key << "\n" << o.output;
}

}  // namespace
}  // namespace bwsim
