// tcgen05.cp SMEM -> TMEM with unit_test.yaml: where every source row lands for each shape, the
// exact cycles of a copy, its order with the warp's MMAs, and its misuse errors.
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <set>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {
namespace {

using test::run_cta;

constexpr SmemAddr kSlot{0};
constexpr MBarrierRef kBar{8};
constexpr SmemAddr kSrc{1024};
constexpr std::uint32_t kUntouched = 0xDEADBEEF;

// The source: word j of row r at (r%8)*16 + (r/8)*256 + (j%4)*4 + (j/4)*128 (K-major, no swizzle,
// LBO 128, SBO 256), holding (r << 8) | j.
SmemDescriptor source_desc() {
  return encode(SmemDescriptorFields{.start_address = kSrc.offset, .leading_byte_offset = 128, .stride_byte_offset = 256});
}

void write_source(Warp& w, std::uint32_t rows) {
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t j = 0; j < 8; ++j) {
      const std::uint32_t v = (r << 8) | j;
      w.st_shared(kSrc + ((r % 8) * 16 + (r / 8) * 256 + (j % 4) * 4 + (j / 4) * 128),
                  std::as_bytes(std::span<const std::uint32_t>(&v, 1)));
    }
  w.fence_proxy_async();
}

// Copies with `shape` to lane `lane` of column 0 after filling 128 lanes x 8 columns with
// kUntouched; returns the 128 x 8 cells read back (each warp reads its quadrant with 32x32b).
std::vector<std::uint32_t> copy_and_dump(TmemCopyShape shape, std::uint32_t lane) {
  std::vector<std::uint32_t> cells(128 * 8);
  run_cta(
      [&](Warp& w) -> Task {
        const std::uint32_t q = w.warp_idx();
        if (q == 0) co_await w.tcgen05_alloc(kSlot, 32);
        co_await w.syncthreads();
        std::vector<std::uint32_t> regs(32 * 8, kUntouched);
        w.tcgen05_st(TmemAddr::at(32 * q, 0), TmemShape::S32x32b, 8, regs);
        co_await w.tcgen05_wait_st();
        co_await w.syncthreads();
        if (q == 0) {
          write_source(w, 128);
          w.mbarrier_init(kBar, 1);
          w.tcgen05_cp(TmemAddr::at(lane, 0), source_desc(), shape);
          w.tcgen05_commit(kBar);
          co_await w.mbarrier_wait(kBar, 0);
        }
        co_await w.syncthreads();
        w.tcgen05_ld(TmemAddr::at(32 * q, 0), TmemShape::S32x32b, 8, regs);
        co_await w.tcgen05_wait_ld();
        std::copy(regs.begin(), regs.end(), cells.begin() + 32 * q * 8);
        co_await w.syncthreads();
        if (q == 0) w.tcgen05_dealloc(TmemAddr{0}, 32);
      },
      128, 8192);
  return cells;
}

// Checks the dump against "source row r is in these lanes" (columns 0..words-1), everything else untouched.
void expect_placement(TmemCopyShape shape, std::uint32_t lane, std::uint32_t words,
                      const std::map<std::uint32_t, std::uint32_t>& row_of_lane) {
  const std::vector<std::uint32_t> cells = copy_and_dump(shape, lane);
  for (std::uint32_t l = 0; l < 128; ++l)
    for (std::uint32_t c = 0; c < 8; ++c) {
      const auto it = row_of_lane.find(l);
      const std::uint32_t want = it != row_of_lane.end() && c < words ? (it->second << 8) | c : kUntouched;
      ASSERT_EQ(cells[l * 8 + c], want) << name_of(shape) << " lane " << l << " column " << c;
    }
}

TEST(TmemCopyTest, Shape128x256bPutsRowRInLaneR) {
  std::map<std::uint32_t, std::uint32_t> m;
  for (std::uint32_t r = 0; r < 128; ++r) m[r] = r;
  expect_placement(TmemCopyShape::S128x256b, 0, 8, m);
}

TEST(TmemCopyTest, Shape128x128bFillsFourColumns) {
  std::map<std::uint32_t, std::uint32_t> m;
  for (std::uint32_t r = 0; r < 128; ++r) m[r] = r;
  expect_placement(TmemCopyShape::S128x128b, 0, 4, m);
}

TEST(TmemCopyTest, Shape4x256bPutsOneRowInEachQuadrant) {
  expect_placement(TmemCopyShape::S4x256b, 3, 8, {{3, 0}, {35, 1}, {67, 2}, {99, 3}});
}

TEST(TmemCopyTest, Warpx4MulticastsThirtyTwoRowsToEveryQuadrant) {
  std::map<std::uint32_t, std::uint32_t> m;
  for (std::uint32_t l = 0; l < 128; ++l) m[l] = l % 32;
  expect_placement(TmemCopyShape::S32x128bWarpx4, 0, 4, m);
}

TEST(TmemCopyTest, Warpx2_02_13PairsQuadrantsZeroTwoAndOneThree) {
  std::map<std::uint32_t, std::uint32_t> m;
  for (std::uint32_t l = 0; l < 128; ++l) m[l] = l % 64;  // rows 0-31 -> q0, q2; rows 32-63 -> q1, q3
  expect_placement(TmemCopyShape::S64x128bWarpx2_02_13, 0, 4, m);
}

TEST(TmemCopyTest, Warpx2_01_23PairsQuadrantsZeroOneAndTwoThree) {
  std::map<std::uint32_t, std::uint32_t> m;
  for (std::uint32_t l = 0; l < 128; ++l) m[l] = (l / 64) * 32 + l % 32;  // rows 0-31 -> q0, q1; 32-63 -> q2, q3
  expect_placement(TmemCopyShape::S64x128bWarpx2_01_23, 0, 4, m);
}

// Issue at t (1 cycle), pipe start t + 1, 4096 bytes at 128 B/cycle = 32 cycles, in TMEM 30
// (tmem.access_latency) later; commit arrives 5 after, the waiter wakes 10 after that.
TEST(TmemCopyTest, CopyTakesTheCyclesDerivedFromTheConfig) {
  Cycle elapsed = 0;
  run_cta([&](Warp& w) -> Task {
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32);
    w.mbarrier_init(kBar, 1);
    const Cycle t = w.now();
    w.tcgen05_cp(d, source_desc(), TmemCopyShape::S128x256b);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    elapsed = w.now() - t;
    w.tcgen05_dealloc(d, 32);
  }, 32, 8192, Mode::Timing);
  EXPECT_EQ(elapsed, 1u + 32u + 30u + 15u);
}

// The copy and the MMA after it share the pipe in issue order: the MMA (issued at t + 1) starts
// when the copy's 32 SMEM cycles end at t + 33, not at t + 2; done 32 + 60 (TS latency) later, +15 to wake.
TEST(TmemCopyTest, AnMmaAfterACopyWaitsForItInThePipe) {
  Cycle elapsed = 0;
  run_cta([&](Warp& w) -> Task {
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 128);
    w.mbarrier_init(kBar, 1);
    const Cycle t = w.now();
    w.tcgen05_cp(d + 64, source_desc(), TmemCopyShape::S128x256b);
    w.tcgen05_mma(MmaKind::F16, d, d + 64, source_desc(), encode(MmaKind::F16, {.m = 128, .n = 64}), false);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    elapsed = w.now() - t;
    w.tcgen05_dealloc(d, 128);
  }, 32, 8192, Mode::Timing);
  EXPECT_EQ(elapsed, 33u + 32u + 60u + 15u);
}

// A copied into TMEM feeds a TS MMA: a 128x256b row is one M row of 16 bf16 K values, exactly
// the A-in-TMEM operand. A[m][k] = 1 for k == m % 16 and B[n][k] = k + n give D[m][n] = m % 16 + n,
// which is right only if the MMA saw the copied bytes.
TEST(TmemCopyTest, CopiedOperandFeedsATsMma) {
  std::vector<std::uint32_t> row(32 * 16);
  run_cta([&](Warp& w) -> Task {
    const SmemAddr b{1024 + 4096};
    auto put = [&](SmemAddr base, std::uint32_t r, std::uint32_t k, float v) {
      const std::uint16_t h = float_to_bf16(v);
      w.st_shared(base + ((r % 8) * 16 + (r / 8) * 256 + (k % 8) * 2 + (k / 8) * 128),
                  std::as_bytes(std::span<const std::uint16_t>(&h, 1)));
    };
    for (std::uint32_t m = 0; m < 128; ++m)
      for (std::uint32_t k = 0; k < 16; ++k) put(kSrc, m, k, k == m % 16 ? 1.0f : 0.0f);
    for (std::uint32_t n = 0; n < 16; ++n)
      for (std::uint32_t k = 0; k < 16; ++k) put(b, n, k, static_cast<float>(k + n));
    w.fence_proxy_async();
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32);
    w.mbarrier_init(kBar, 1);
    w.tcgen05_cp(d + 16, source_desc(), TmemCopyShape::S128x256b);
    const SmemDescriptor bd =
        encode(SmemDescriptorFields{.start_address = b.offset, .leading_byte_offset = 128, .stride_byte_offset = 256});
    w.tcgen05_mma(MmaKind::F16, d, d + 16, bd, encode(MmaKind::F16, {.m = 128, .n = 16}), false);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    w.tcgen05_ld(d, TmemShape::S32x32b, 16, row);
    co_await w.tcgen05_wait_ld();
    w.tcgen05_dealloc(d, 32);
  }, 32, 16384);
  for (std::uint32_t m : {0u, 7u, 16u, 31u})
    for (std::uint32_t n : {0u, 9u, 15u})
      EXPECT_EQ(std::bit_cast<float>(row[m * 16 + n]), static_cast<float>(m % 16 + n)) << "m " << m << " n " << n;
}

template <class Program>
void expect_cp_misuse(Program program, Rule rule, const char* text) {
  try {
    run_cta(program, 32, 8192);
    ADD_FAILURE() << "no misuse raised";
  } catch (const MisuseError& e) {
    EXPECT_EQ(e.rule(), rule) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tcgen05.cp"), std::string::npos) << e.what();
  }
}

TEST(TmemCopyTest, MisuseErrors) {
  // 128 rows from lane 1 run past lane 127.
  expect_cp_misuse(
      [](Warp& w) -> Task {
        const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32);
        w.tcgen05_cp(TmemAddr::at(1, d.column()), source_desc(), TmemCopyShape::S128x128b);
      },
      Rule::TmemOutOfAllocation, "lanes [1, 129)");
  // Columns 28..35 of a 32-column allocation.
  expect_cp_misuse(
      [](Warp& w) -> Task {
        const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32);
        w.tcgen05_cp(d + 28, source_desc(), TmemCopyShape::S128x256b);
      },
      Rule::TmemOutOfAllocation, "columns [28, 36)");
  // The source's last 8-row group starts at 7424 + 15 * 256 > 8192.
  expect_cp_misuse(
      [](Warp& w) -> Task {
        const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32);
        w.tcgen05_cp(d,
                     encode(SmemDescriptorFields{.start_address = 7424, .leading_byte_offset = 128, .stride_byte_offset = 256}),
                     TmemCopyShape::S128x256b);
      },
      Rule::SmemOutOfBounds, "source");
}

}  // namespace
}  // namespace bwsim
