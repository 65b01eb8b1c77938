// gemm_sm90_loads (kernels/GemmSm90Loads): gemm_sm90's producer alone, as h100_gemm_loads.cu. Every
// tile's k-blocks load the boxes --parts names, once each, A's rows are the tile's or (--private-a)
// the CTA's own, its operands' L2 promotion is --l2-promotion's, and its tile log has a row per
// tile in the persistent order; bad parts are a clear error.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "bwsim/core/Csv.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {
namespace {

RunResult run_loads(const std::string& parts, const std::string& tile_log = "", const std::string& private_a = "none",
                    const char* k_size = "256", const char* kb_log = "0") {
  static const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  const KernelInfo& k = *find_kernel("gemm_sm90_loads");
  KernelRequest req{h100, SimOptions{.mode = Mode::Timing}, {}, false};
  for (const KernelParam& p : k.params) req.args.set(p.name, p.default_value);
  // 4 x 2 tiles of 128 x 128 over 3 CTAs, K / 64 k-blocks each (4 at the default K), 2 stages
  for (const auto& [name, value] : {std::pair{"m", "512"}, {"n", "256"}, {"k", k_size}, {"stages", "2"}, {"grid", "3"}})
    req.args.set(name, value);
  req.args.set("private-a", private_a);
  req.args.set("parts", parts);
  req.args.set("tile-log", tile_log);
  req.args.set("kb-log", kb_log);
  return k.run(req).run;
}

TEST(GemmSm90LoadsTest, EveryTilesKBlocksLoadTheBoxesItsPartsName) {
  const RunResult ab = run_loads("ab"), a = run_loads("a"), b = run_loads("b");
  EXPECT_EQ(ab.tma.loads, 8u * 4 * 2);
  EXPECT_EQ(a.tma.loads, 8u * 4);
  EXPECT_EQ(b.tma.loads, 8u * 4);
  EXPECT_EQ(ab.tma.load_bytes, 8u * 4 * 2 * 16384);  // 128 rows of 128 bytes per box
  EXPECT_EQ(ab.tma.stores, 0u);                      // no epilogue
  EXPECT_GT(ab.cycles, a.cycles);
}

// K = 1024: 16 k-blocks of 64 bf16 per tile, a row of A 2 KiB. The L2 holds every byte here, so HBM
// reads each distinct A line once: the 4 m-tiles' 512 rows (shared), each CTA's own 128 rows over
// all of K (hbm), or only their first 4 k-blocks, 512 bytes a row (l2).
TEST(GemmSm90LoadsTest, PrivateAReadsTheCtasOwnRows) {
  EXPECT_EQ(run_loads("a", "", "none", "1024").memory.hbm_read_bytes, 512u * 2048);
  EXPECT_EQ(run_loads("a", "", "hbm", "1024").memory.hbm_read_bytes, 3u * 128 * 2048);
  const RunResult hot = run_loads("a", "", "l2", "1024");
  EXPECT_EQ(hot.memory.hbm_read_bytes, 3u * 128 * 512);
  EXPECT_EQ(hot.tma.loads, 8u * 16);  // every tile's k-blocks still load a box each
  test::expect_bad_input("run gemm_sm90_loads --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --private-a b",
                         "--private-a: expected none, hbm or l2, got 'b'");
}

TEST(GemmSm90LoadsTest, TheTileLogHasARowPerTileInThePersistentOrder) {
  const std::string path = ::testing::TempDir() + "gemm_sm90_loads_tiles.csv";
  run_loads("ab", path);
  std::ifstream log(path);
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line.rfind("# clock_mhz,", 0), 0u);
  std::getline(log, line);
  EXPECT_EQ(line, "cta,smid,j,tile,m,n,start_ns,start_cycles");
  std::vector<std::string> rows;
  while (std::getline(log, line)) rows.push_back(line);
  // CTA c takes tiles c, c + 3, c + 6: 3 + 3 + 2 rows, by CTA then j; tile 0 is (m 0, n 0) at cycle 0
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows.front().substr(0, 2), "0,");
  EXPECT_EQ(rows.front().substr(rows.front().size() - 2), ",0");
  EXPECT_EQ(rows.back().substr(0, 2), "2,");
  std::remove(path.c_str());
}

// --kb-log 1: a row per k-block's loads, by CTA, tile and k-block, with the k-block in its own
// column; a CTA's loads go out in that order, so its times never fall.
TEST(GemmSm90LoadsTest, TheKBlockLogHasARowPerKBlockInIssueOrder) {
  const std::string path = ::testing::TempDir() + "gemm_sm90_loads_kblocks.csv";
  run_loads("ab", path, "none", "256", "1");
  EXPECT_EQ(read_csv_header(path), (std::vector<std::string>{"cta", "smid", "j", "tile", "m", "n", "kb", "start_ns",
                                                             "start_cycles"}));
  std::vector<std::vector<long>> rows;
  for (const auto& fields : read_csv_rows(path, 9)) {
    std::vector<long> v;
    for (std::size_t i = 0; i < 9; ++i) v.push_back(std::stol(fields[i]));
    rows.push_back(v);
  }
  ASSERT_EQ(rows.size(), 8u * 4);  // 8 tiles of 4 k-blocks
  for (std::size_t r = 0; r < rows.size(); ++r) {
    EXPECT_EQ(rows[r][6], static_cast<long>(r % 4)) << "row " << r;  // kb 0..3 within each tile
    if (r > 0 && rows[r][0] == rows[r - 1][0]) {
      EXPECT_GE(rows[r][8], rows[r - 1][8]) << "row " << r;
    }
  }
  EXPECT_EQ(rows.front()[8], 0);
  // Two stages: k-blocks 0 and 1 of a CTA's first tile go out a few issue cycles apart; k-block 2
  // reuses k-block 0's stage, so it goes out only after that stage's boxes landed, at least
  // h100.yaml's tma.load_latency (376) after k-block 0.
  EXPECT_LT(rows[1][8], 20);
  EXPECT_GE(rows[2][8], rows[0][8] + 376);
  std::remove(path.c_str());
  test::expect_bad_input("run gemm_sm90_loads --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --kb-log 2",
                         "--kb-log must be an integer in 0..1");
}

// One 128x128 tile with K = 128 (rows 256 bytes apart, two k-blocks): with 256B promotion the
// second k-block's boxes (A and B, 16 KiB each) hit the lines the first's fetch promoted; with
// 128B (the CUDA program's --promotion 128) none does.
TEST(GemmSm90LoadsTest, TheOperandsL2PromotionReachesTheirMaps) {
  auto hits = [](const char* promotion) {
    const test::Outcome o = test::bwsim(std::string("run gemm_sm90_loads --config " BWSIM_SOURCE_DIR
                                                    "/sim_configs/h100.yaml --m 128 --n 128 --k 128 --grid 1 --json "
                                                    "--l2-promotion ") + promotion);
    EXPECT_EQ(o.exit_code, 0) << o.output;
    return o.output;
  };
  EXPECT_NE(hits("256").find("\"l2_hit_bytes\":32768,"), std::string::npos);
  EXPECT_NE(hits("128").find("\"l2_hit_bytes\":0,"), std::string::npos);
  test::expect_bad_input("run gemm_sm90_loads --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --l2-promotion 64",
                         "--l2-promotion must be an integer in 128..256");
}

TEST(GemmSm90LoadsTest, UnknownPartsAreAClearError) {
  test::expect_bad_input("run gemm_sm90_loads --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --parts c",
                         "--parts: expected ab, a or b, got 'c'");
}

}  // namespace
}  // namespace bwsim
