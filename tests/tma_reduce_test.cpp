// TMA reductions (cp.reduce.async.bulk.tensor .add.f32): the adds land element-wise in GMEM, and
// the timing on the unit-test config (TMA issue 2, 64 B/cycle from SMEM, store path 64 B/cycle,
// reduction path 32 B/cycle, store latency 50, reduce_link_cost 2).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

constexpr SmemAddr kSrc{1024};
constexpr std::uint32_t kRows = 32, kCols = 32;  // one box: 32 rows of 32 f32 (128 B), 4096 bytes

struct ReduceBench {
  HardwareConfig config;
  std::unique_ptr<Simulator> sim;
  GmemAddr at;
  TensorMap map;

  explicit ReduceBench(const HardwareConfig& c = test::unit_config(), Mode mode = Mode::Functional,
                       DataType type = DataType::F32)
      : config(c), sim(std::make_unique<Simulator>(config, SimOptions{.mode = mode})),
        at(sim->gmem().alloc(kRows * kCols * 4)),
        map(TensorMap::tiled({.dtype = type, .address = at, .dims = {kCols, kRows}, .strides = {kCols * 4},
                              .box = {kCols, kRows}})) {}
  RunResult run(const WarpProgram& p) {
    return sim->launch("tma-reduce", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 8192}, p);
  }
  float gmem(std::uint32_t i) {
    float v;
    std::memcpy(&v, sim->gmem().bytes(GmemAddr{at.value + 4 * i}, 4).data(), 4);
    return v;
  }
};

// Fills the SMEM box with base + i / 8 (exact in f32) and adds it `times` times.
WarpProgram add_box(const TensorMap& map, float base, std::uint32_t times) {
  return [&map, base, times](Warp& w) -> Task {
    std::vector<float> v(kRows * kCols);
    for (std::uint32_t i = 0; i < v.size(); ++i) v[i] = base + static_cast<float>(i) / 8;
    w.st_shared(kSrc, std::as_bytes(std::span(v)));
    w.fence_proxy_async();
    for (std::uint32_t t = 0; t < times; ++t) w.tma_reduce_add(map, kSrc, {0, 0});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
  };
}

TEST(TmaReduceTest, AddsTheBoxIntoWhatGmemHolds) {
  ReduceBench b;
  for (std::uint32_t i = 0; i < kRows * kCols; ++i) {
    const float v = 0.25f * static_cast<float>(i % 7);
    std::memcpy(b.sim->gmem().bytes(GmemAddr{b.at.value + 4 * i}, 4).data(), &v, 4);
  }
  const RunResult r = b.run(add_box(b.map, 1.0f, 3));
  for (std::uint32_t i = 0; i < kRows * kCols; ++i)
    ASSERT_EQ(b.gmem(i), 0.25f * static_cast<float>(i % 7) + 3 * (1.0f + static_cast<float>(i) / 8)) << i;
  EXPECT_EQ(r.tma.reduces, 3u);
  EXPECT_EQ(r.tma.reduce_bytes, 3u * 4096);
  EXPECT_EQ(r.tma.stores, 0u);
  EXPECT_EQ(r.memory.l2_reduce_bytes, 3u * 4096);
}

// Each add is an f32 FADD rounded to nearest even: 2^24 + 1 is not representable, so adding 1
// to 2^24 twice in two reductions leaves 2^24 (not 2^24 + 2, which an exact sum would give).
TEST(TmaReduceTest, EachAddRoundsToF32) {
  ReduceBench b;
  const float big = 16777216.0f;
  for (std::uint32_t i = 0; i < kRows * kCols; ++i)
    std::memcpy(b.sim->gmem().bytes(GmemAddr{b.at.value + 4 * i}, 4).data(), &big, 4);
  b.run([&](Warp& w) -> Task {
    std::vector<float> ones(kRows * kCols, 1.0f);
    w.st_shared(kSrc, std::as_bytes(std::span(ones)));
    w.fence_proxy_async();
    w.tma_reduce_add(b.map, kSrc, {0, 0});
    w.tma_reduce_add(b.map, kSrc, {0, 0});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
  });
  EXPECT_EQ(b.gmem(0), big);
}

// The box streams from SMEM at 64 B/cycle (2 .. 66) but leaves the SM at the reduction path's
// 32 B/cycle: 4096 / 32 = 128 cycles from 2, so 130; the SMEM read counts as done store latency
// (50) later, at 180, and so does the write (the L2 here is too fast to matter). A second
// reduction queues on the path: 130 .. 258, done at 308. A store would leave at 64 B/cycle: 116.
TEST(TmaReduceTest, ReductionsLeaveTheSmAtTheReductionPathsRate) {
  ReduceBench b(test::unit_config(), Mode::Timing);
  Cycle read = 0, first = 0, second = 0;
  b.run([&](Warp& w) -> Task {
    w.tma_reduce_add(b.map, kSrc, {0, 0});
    w.bulk_commit_group();
    w.tma_reduce_add(b.map, kSrc, {0, 0});
    w.bulk_commit_group();
    co_await w.bulk_wait_group_read(1);
    read = w.now();
    co_await w.bulk_wait_group(1);
    first = w.now();
    co_await w.bulk_wait_group(0);
    second = w.now();
  });
  EXPECT_EQ(read, 130u + 50);
  EXPECT_EQ(first, 130u + 50);
  EXPECT_EQ(second, 258u + 50);
}

// A slow L2 (16 B/cycle): a store of the box takes 4096 / 16 = 256 array cycles (2 .. 258, written
// 308); a reduction takes reduce_link_cost (2) array bytes per byte: 512 cycles (2 .. 514, written
// 564) although its path is done at 130.
TEST(TmaReduceTest, AReductionTakesTheL2ArraysLongerThanAStore) {
  HardwareConfig c = test::unit_config();
  c.l2.gbytes_per_second = 16;
  ReduceBench b(c);
  Cycle stored = 0, reduced = 0;
  b.run([&](Warp& w) -> Task {
    w.tma_store(b.map, kSrc, {0, 0});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
    stored = w.now();
  });
  b.run([&](Warp& w) -> Task {
    w.tma_reduce_add(b.map, kSrc, {0, 0});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
    reduced = w.now();
  });
  EXPECT_EQ(stored, 258u + 50);
  EXPECT_EQ(reduced, 514u + 50);
}

// With HBM 300 cycles away: the first reduction's lines are not in the L2, so each add waits for
// its line (read for ownership: across the HBM link at 3, each link ending on a whole cycle, in
// the L2 at 303, added by 304, written at 354) and the line is written back
// (4096 bytes read and 4096 written); the second finds them resident (path 130 .. 258, written
// 308) and touches no HBM.
TEST(TmaReduceTest, AMissedLineIsReadFromHbmBeforeTheAddAndAResidentOneIsNot) {
  HardwareConfig c = test::unit_config();
  c.hbm.latency = 300;
  ReduceBench b(c);
  Cycle first = 0;
  const RunResult miss = b.run([&](Warp& w) -> Task {
    w.tma_reduce_add(b.map, kSrc, {0, 0});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
    first = w.now();
  });
  EXPECT_EQ(first, 304u + 50);
  EXPECT_EQ(miss.memory.hbm_read_bytes, 4096u);
  EXPECT_EQ(miss.memory.hbm_write_bytes, 4096u);
  Cycle again = 0;
  const RunResult hit = b.run([&](Warp& w) -> Task {
    w.tma_reduce_add(b.map, kSrc, {0, 0});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
    again = w.now();
  });
  EXPECT_EQ(again, 130u + 50);
  EXPECT_EQ(hit.memory.hbm_read_bytes, 0u);
  EXPECT_EQ(hit.memory.hbm_write_bytes, 0u);
}

TEST(TmaReduceTest, OnlyF32TensorsCanBeReduced) {
  ReduceBench b(test::unit_config(), Mode::Functional, DataType::BF16);
  const MisuseError e = test::expect_misuse([&] {
    b.run([&](Warp& w) -> Task {
      w.tma_reduce_add(b.map, kSrc, {0, 0});
      co_return;
    });
  }, Rule::TmaInvalid);
  EXPECT_NE(std::string(e.what()).find("tma.reduce.add"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("a bf16 tensor map"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace bwsim
