// tcgen05.mma.ws on unit_test.yaml: the folded D layouts against hand tables, an exact M = 32
// product read back by four warps, the B collector buffers (the result, the SMEM reads they save,
// their misuse), and the shapes and kinds .ws takes.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/tensor/sm100/MmaPipe.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {
namespace {

using test::expect_misuse;
using test::run_cta;

constexpr SmemAddr kSlot{0};
constexpr MBarrierRef kBar{8};
constexpr SmemAddr kA{1024}, kB{8192};

// PTX Layouts G (M = 32, 1x4 datapath) and E (M = 64, 2x2); CUTLASS tmem_frg_ws, worked by hand.
TEST(WsLayoutTest, DIsFoldedOverTheLanes) {
  MmaInstr in{.ws = true};
  auto cell = [&](std::uint32_t M, std::uint32_t N, std::uint32_t m, std::uint32_t n) {
    in.f.m = M;
    in.f.n = N;
    const TmemCell c = accumulator_cell(in, m, n);
    return std::pair{c.lane, c.column};
  };
  EXPECT_EQ(cell(32, 64, 5, 17), std::pair(37u, 1u));    // N quarter 1 in lanes 32-63
  EXPECT_EQ(cell(32, 256, 31, 255), std::pair(127u, 63u));
  EXPECT_EQ(cell(64, 128, 63, 64), std::pair(127u, 0u));  // N half 1 in lanes 64-127
  EXPECT_EQ(cell(64, 128, 10, 63), std::pair(10u, 63u));
  EXPECT_EQ(cell(128, 64, 100, 60), std::pair(100u, 60u));
  in.f.m = 32;
  in.f.n = 128;
  EXPECT_EQ(in.d_columns(), 32u);
}

// The functional MMA writes a row of D in runs of accumulator_run() columns from the cell of each
// run's first n: every layout (cta_group::1 M 64/128, cta_group::2 M 128/256, .ws M 32/64/128)
// must agree with accumulator_cell for every (m, n).
TEST(WsLayoutTest, RowsOfDAreContiguousInRunsOfAccumulatorRun) {
  struct Shape {
    bool ws, pair;
    std::uint32_t m;
  };
  for (const Shape s : {Shape{false, false, 64}, Shape{false, false, 128}, Shape{false, true, 128},
                        Shape{false, true, 256}, Shape{true, false, 32}, Shape{true, false, 64}, Shape{true, false, 128}})
    for (const std::uint32_t n_len : {64u, 256u}) {
      MmaInstr in{.ws = s.ws};
      in.pair = s.pair;
      in.f.m = s.m;
      in.f.n = n_len;
      const std::uint32_t run = accumulator_run(in);
      ASSERT_EQ(n_len % run, 0u);
      for (std::uint32_t m = 0; m < s.m / (s.pair ? 2 : 1); ++m)
        for (std::uint32_t n = 0; n < n_len; ++n) {
          const TmemCell first = accumulator_cell(in, m, n - n % run), c = accumulator_cell(in, m, n);
          ASSERT_EQ(c.lane, first.lane) << s.m << " " << m << " " << n;
          ASSERT_EQ(c.column, first.column + n % run) << s.m << " " << m << " " << n;
        }
    }
}

// K-major, no swizzle (16-byte core-matrix rows, LBO 128 for the second 16 bytes of K, SBO 256).
constexpr SmemDescriptorFields kLayout{.start_address = 0, .leading_byte_offset = 128, .stride_byte_offset = 256};
constexpr double kValues[8] = {0.5, 1, 1.5, 2, -1, 3, -0.5, 4};

SmemDescriptor desc(SmemAddr at) {
  SmemDescriptorFields f = kLayout;
  f.start_address = at.offset;
  return encode(f);
}

// M = 32, N = 64 f16 twice: the first fills collector b2 with B, the second reads it from there
// and accumulates, so D = 2 A B. Four warps read D back, each its 32 lanes (its N quarter).
TEST(WsProductTest, DIsTheProductLaidOutAsLayoutG) {
  constexpr std::uint32_t M = 32, N = 64, K = 16;
  std::vector<std::byte> a(4096), b(4096);
  auto put = [](std::vector<std::byte>& img, std::uint32_t r, std::uint32_t k, double v) {
    const std::uint16_t h = float_to_half(static_cast<float>(v));
    std::memcpy(&img[operand_address(kLayout, Major::K, 2, r, k)], &h, 2);
  };
  for (std::uint32_t r = 0; r < M; ++r)
    for (std::uint32_t k = 0; k < K; ++k) put(a, r, k, kValues[(r * 3 + k * 5) % 8]);
  for (std::uint32_t n = 0; n < N; ++n)
    for (std::uint32_t k = 0; k < K; ++k) put(b, n, k, kValues[(n * 7 + k) % 8]);
  const InstrDescriptor idesc = encode(MmaKind::F16, {.a_type = DataType::F16, .b_type = DataType::F16, .m = M, .n = N});
  std::vector<std::vector<std::uint32_t>> d(4, std::vector<std::uint32_t>(32 * N / 4));
  run_cta(
      [&](Warp& w) -> Task {
        if (w.warp_idx() == 0) {
          w.st_shared(kA, a);
          w.st_shared(kB, b);
          w.fence_proxy_async();
          w.mbarrier_init(kBar, 1);
          co_await w.tcgen05_alloc(kSlot, 32);
        }
        co_await w.syncthreads();
        const TmemAddr t{w.ld_shared_u32(kSlot)};
        if (w.warp_idx() == 0) {
          w.tcgen05_mma_ws(MmaKind::F16, t, desc(kA), desc(kB), idesc, false, {2, CollectorOp::Fill});
          w.tcgen05_mma_ws(MmaKind::F16, t, desc(kA), desc(kB), idesc, true, {2, CollectorOp::LastUse});
          w.tcgen05_commit(kBar);
        }
        co_await w.mbarrier_wait(kBar, 0);
        w.tcgen05_fence_after_thread_sync();
        w.tcgen05_ld(TmemAddr::at(32 * w.warp_idx(), t.column()), TmemShape::S32x32b, N / 4, d[w.warp_idx()]);
        co_await w.tcgen05_wait_ld();
        co_await w.syncthreads();
        if (w.warp_idx() == 0) w.tcgen05_dealloc(t, 32);
      },
      128, 16384);
  for (std::uint32_t i = 0; i < M; ++i)
    for (std::uint32_t j = 0; j < N; ++j) {
      double want = 0;
      for (std::uint32_t k = 0; k < K; ++k) want += 2 * kValues[(i * 3 + k * 5) % 8] * kValues[(j * 7 + k) % 8];
      // Warp j / 16's lanes hold N quarter j / 16: its row i, column j % 16 (tcgen05.ld 32x32b
      // gives lane-major registers: lane i's 16 columns in a row).
      const std::uint32_t got = d[j / 16][i * (N / 4) + j % 16];
      ASSERT_EQ(static_cast<double>(std::bit_cast<float>(got)), want) << "row " << i << " column " << j;
    }
}

void expect_ws_misuse(MmaKind kind, InstrDescriptorFields f, std::vector<Collector> sequence, const std::string& message) {
  const MisuseError e = expect_misuse(
      [&] {
        run_cta(
            [&](Warp& w) -> Task {
              const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 512);
              const InstrDescriptor idesc = encode(kind, f);
              for (std::size_t i = 0; i < sequence.size(); ++i)  // the last one names B at kA
                w.tcgen05_mma_ws(kind, t, desc(kA), desc(i + 1 == sequence.size() && sequence.size() > 2 ? kA : kB),
                                 idesc, false, sequence[i]);
            },
            32, 32768);
      },
      Rule::MmaInvalid);
  EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
}

TEST(WsMisuseTest, CollectorBuffersNeedAValidFillOfTheSameB) {
  const InstrDescriptorFields f{.m = 64, .n = 128};
  expect_ws_misuse(MmaKind::F16, f, {{1, CollectorOp::Use}}, ".collector::b1::use without a valid fill");
  expect_ws_misuse(MmaKind::F16, f, {{3, CollectorOp::Fill}, {3, CollectorOp::LastUse}, {3, CollectorOp::Use}},
                   ".collector::b3::use without a valid fill");
  expect_ws_misuse(MmaKind::F16, f, {{0, CollectorOp::Fill}, {0, CollectorOp::Use}, {0, CollectorOp::Use}},
                   "names B at SMEM 0x400, but the buffer holds the B filled from 0x2000");
  expect_ws_misuse(MmaKind::F16, f, {{4, CollectorOp::Fill}}, "collector buffer b4 does not exist");
}

TEST(WsMisuseTest, OnlyTheWsShapesAndKinds) {
  expect_ws_misuse(MmaKind::F16, {.m = 32, .n = 32}, {{}}, "shape M=32 N=32 is not a .ws shape");
  expect_ws_misuse(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .m = 128, .n = 64}, {{}},
                   "kind::mxf8f6f4 has no .ws form");
  expect_ws_misuse(MmaKind::F16, {.sparse = true, .m = 64, .n = 64}, {{}}, "tcgen05.mma.ws.sp is not modeled");
}

// M = 32, N = 64 f16: math 2 x 32 x 64 x 16 / 8192 = 8 cycles; SMEM (32 + 64) x 32 = 3072 bytes =
// 24 cycles, or 1024 = 8 with B from the collector. Three MMAs (fill, then two uses) start 24 and
// 8 apart: 1 + 24 + 8 + 8 + 100 + 15; reading B each time they start 24 apart: 1 + 24 + 24 + 8 + 100 + 15.
TEST(WsTimingTest, ACollectorUseSkipsTheBRead) {
  auto run = [](CollectorOp then) {
    Cycle elapsed = 0;
    run_cta(
        [&](Warp& w) -> Task {
          const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 512);
          w.mbarrier_init(kBar, 1);
          const auto idesc = encode(MmaKind::F16, {.m = 32, .n = 64});
          const Cycle t = w.now();
          w.tcgen05_mma_ws(MmaKind::F16, d, desc(kA), desc(kB), idesc, false,
                           {1, then == CollectorOp::Use ? CollectorOp::Fill : CollectorOp::Discard});
          for (int i = 0; i < 2; ++i) w.tcgen05_mma_ws(MmaKind::F16, d, desc(kA), desc(kB), idesc, true, {1, then});
          w.tcgen05_commit(kBar);
          co_await w.mbarrier_wait(kBar, 0);
          elapsed = w.now() - t;
          w.tcgen05_dealloc(d, 512);
        },
        32, 32768, Mode::Timing);
    return elapsed;
  };
  EXPECT_EQ(run(CollectorOp::Use), 1u + 24u + 8u + 8u + 100u + 15u);
  EXPECT_EQ(run(CollectorOp::Discard), 1u + 24u + 24u + 8u + 100u + 15u);
}

}  // namespace
}  // namespace bwsim
