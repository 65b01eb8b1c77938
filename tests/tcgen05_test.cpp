// tcgen05 on one SM with unit_test.yaml: TMEM allocation, the tcgen05.ld/st lane/column maps,
// MMA arithmetic (overwrite vs accumulate, operands from TMA-swizzled SMEM) and exact MMA timing.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {
namespace {

using test::run_cta;

constexpr SmemAddr kSlot{0};       // where tcgen05.alloc writes the address
constexpr MBarrierRef kBar{8};

using test::expect_misuse;

// ---------------------------------------------------------------------------------- alloc

TEST(TmemAllocTest, BlocksWhileFullAndReusesFreedColumns) {
  Cycle got_at = 0;
  std::uint32_t got_column = 99;
  run_cta(
      [&](Warp& w) -> Task {
        if (w.warp_idx() == 0) {
          const TmemAddr a = co_await w.tcgen05_alloc(kSlot, 512);  // t=0: passes, +1 issue, +20 alloc
          EXPECT_EQ(a.raw, 0u);
          EXPECT_EQ(w.ld_shared_u32(kSlot), 0u);                     // 1 cycle: 22
          co_await w.sleep(100);                                     // until 122
          w.tcgen05_dealloc(a, 512);                                 // lands at 122 + 20 = 142
        } else {
          const TmemAddr b = co_await w.tcgen05_alloc(SmemAddr{4}, 256);  // blocks: all 512 columns taken
          got_at = w.now();  // woken at 142 + 1, plus its own 20 cycles of allocation
          got_column = b.column();
          w.tcgen05_dealloc(b, 256);
        }
      },
      64);
  EXPECT_EQ(got_at, 163u);
  EXPECT_EQ(got_column, 0u);
}

TEST(TmemAllocTest, AllocationsAreAlignedToTheirSize) {
  std::vector<std::uint32_t> columns;
  run_cta([&](Warp& w) -> Task {
    for (std::uint32_t n : {32u, 64u, 32u, 128u}) columns.push_back((co_await w.tcgen05_alloc(kSlot, n)).column());
    w.tcgen05_dealloc(TmemAddr::at(0, 0), 32);
    w.tcgen05_dealloc(TmemAddr::at(0, 64), 64);
    w.tcgen05_dealloc(TmemAddr::at(0, 32), 32);
    w.tcgen05_dealloc(TmemAddr::at(0, 128), 128);
  });
  EXPECT_EQ(columns, (std::vector<std::uint32_t>{0, 64, 32, 128}));
}

TEST(TmemAllocTest, RejectsBadColumnCounts) {
  expect_misuse([] { run_cta([](Warp& w) -> Task { co_await w.tcgen05_alloc(kSlot, 96); }); }, Rule::TmemAllocMisuse);
  expect_misuse([] { run_cta([](Warp& w) -> Task { co_await w.tcgen05_alloc(kSlot, 16); }); }, Rule::TmemAllocMisuse);
}

TEST(TmemAllocTest, ExitWithColumnsAllocatedIsAnError) {
  const auto e = expect_misuse([] { run_cta([](Warp& w) -> Task { co_await w.tcgen05_alloc(kSlot, 64); }); },
                               Rule::TmemAllocMisuse);
  EXPECT_NE(std::string(e.what()).find("64 TMEM columns still allocated"), std::string::npos) << e.what();
}

TEST(TmemAllocTest, DeallocOfColumnsNotAllocatedIsAnError) {
  expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          const TmemAddr a = co_await w.tcgen05_alloc(kSlot, 64);
          w.tcgen05_dealloc(a + 64, 64);
          co_await w.sleep(100);
        });
      },
      Rule::TmemAllocMisuse);
}

TEST(TmemAllocTest, AllocAfterRelinquishIsAnError) {
  expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          w.tcgen05_relinquish_alloc_permit();
          co_await w.tcgen05_alloc(kSlot, 32);
        });
      },
      Rule::TmemAllocMisuse);
}

TEST(TmemAllocTest, AllocThatCanNeverBeSatisfiedIsADeadlockNamingIt) {
  try {
    run_cta(
        [](Warp& w) -> Task {
          const TmemAddr a = co_await w.tcgen05_alloc(kSlot, 512);
          if (w.warp_idx() == 1) co_return;  // never reached: warp 1 waits forever
          co_await w.bar_sync(1, 64);        // warp 0 waits for warp 1, which waits for columns
          w.tcgen05_dealloc(a, 512);
        },
        64);
    FAIL() << "no deadlock";
  } catch (const DeadlockError& e) {
    EXPECT_NE(std::string(e.what()).find("blocked in tcgen05.alloc of 512 columns"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------- ld / st

// Fills the 128 x 64 columns with (lane << 16 | column) through 32x32b stores of all 4 warps,
// then runs `probe` in warp `probe_warp`.
template <class Probe>
void with_tagged_tmem(std::uint32_t probe_warp, Probe probe) {
  run_cta(
      [&](Warp& w) -> Task {
        if (w.warp_idx() == 0) co_await w.tcgen05_alloc(kSlot, 64);
        co_await w.syncthreads();
        const std::uint32_t q = w.warp_idx() % 4;
        std::vector<std::uint32_t> regs(32 * 64);
        for (std::uint32_t t = 0; t < 32; ++t)
          for (std::uint32_t c = 0; c < 64; ++c) regs[t * 64 + c] = ((32 * q + t) << 16) | c;
        w.tcgen05_st(TmemAddr::at(32 * q, 0), TmemShape::S32x32b, 64, regs);
        co_await w.tcgen05_wait_st();
        co_await w.syncthreads();
        if (w.warp_idx() == probe_warp) co_await probe(w);
        co_await w.syncthreads();
        if (w.warp_idx() == 0) w.tcgen05_dealloc(TmemAddr{0}, 64);
      },
      128);
}

struct Expect {
  std::uint32_t thread, reg, lane, column;
};

void check_shape(TmemShape shape, std::uint32_t num, std::uint32_t base_lane, std::vector<Expect> table,
                 std::uint32_t half_split = 0) {
  with_tagged_tmem(base_lane / 32, [&](Warp& w) -> Task {
    const std::uint32_t per_thread = tmem_regs_per_thread(shape, num);
    std::vector<std::uint32_t> regs(32 * per_thread);
    w.tcgen05_ld(TmemAddr::at(base_lane, 4), shape, num, regs, false, half_split);
    co_await w.tcgen05_wait_ld();
    for (const Expect& e : table)
      EXPECT_EQ(regs[e.thread * per_thread + e.reg], ((base_lane + e.lane) << 16) | (4 + e.column))
          << name_of(shape) << " thread " << e.thread << " reg " << e.reg;
  });
}

// Hand tables from the PTX ISA fragment figures (and CUTLASS's SM100_TMEM_LOAD_* layouts).
TEST(TmemLoadTest, Shape32x32bGivesEachThreadItsLane) {
  check_shape(TmemShape::S32x32b, 2, 32, {{0, 0, 0, 0}, {0, 1, 0, 1}, {17, 1, 17, 1}, {31, 0, 31, 0}});
}
TEST(TmemLoadTest, Shape16x64bPairsThreadsOnEightLaneHalves) {
  check_shape(TmemShape::S16x64b, 2, 64,
              {{0, 0, 0, 0}, {1, 0, 8, 0}, {2, 0, 0, 1}, {3, 0, 8, 1}, {5, 0, 9, 0}, {31, 0, 15, 1}, {2, 1, 0, 3}});
}
TEST(TmemLoadTest, Shape16x128bSplitsRegistersAcrossLaneHalves) {
  check_shape(TmemShape::S16x128b, 2, 16, {{5, 0, 1, 1}, {5, 1, 9, 1}, {5, 2, 1, 5}, {5, 3, 9, 5}, {31, 1, 15, 3}});
}
TEST(TmemLoadTest, Shape16x256bIsTheM16N8AccumulatorFragment) {
  check_shape(TmemShape::S16x256b, 1, 96, {{6, 0, 1, 4}, {6, 1, 1, 5}, {6, 2, 9, 4}, {6, 3, 9, 5}, {0, 0, 0, 0}});
}
TEST(TmemLoadTest, Shape16x32bx2ReadsTwoColumnHalves) {
  check_shape(TmemShape::S16x32bx2, 2, 0, {{3, 0, 3, 0}, {3, 1, 3, 1}, {19, 0, 3, 8}, {19, 1, 3, 9}}, 8);
}

TEST(TmemLoadTest, Pack16PutsTwoColumnsLowHalvesInOneRegister) {
  with_tagged_tmem(0, [](Warp& w) -> Task {
    std::vector<std::uint32_t> regs(32 * 2);
    w.tcgen05_ld(TmemAddr::at(0, 0), TmemShape::S32x32b, 2, regs, true);  // columns 0..3
    co_await w.tcgen05_wait_ld();
    EXPECT_EQ(regs[4 * 2 + 0], (1u << 16) | 0u);  // thread 4: low 16 bits of columns 0 and 1
    EXPECT_EQ(regs[4 * 2 + 1], (3u << 16) | 2u);
  });
}

TEST(TmemLoadTest, StoreUnpack16SpreadsHalvesOverTwoColumns) {
  run_cta([](Warp& w) -> Task {
    const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 32);
    std::vector<std::uint32_t> in(32, 0xBEEF1234u), out(32 * 2);
    w.tcgen05_st(t, TmemShape::S32x32b, 1, in, true);
    co_await w.tcgen05_wait_st();
    w.tcgen05_ld(t, TmemShape::S32x32b, 2, out);
    co_await w.tcgen05_wait_ld();
    EXPECT_EQ(out[0], 0x1234u);
    EXPECT_EQ(out[1], 0xBEEFu);
    w.tcgen05_dealloc(t, 32);
  });
}

TEST(TmemLoadTest, WaitLdPassesAfterTransferAndLatency) {
  Cycle issued = 0, ready = 0;
  run_cta([&](Warp& w) -> Task {
    const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 64);  // clock 21
    std::vector<std::uint32_t> regs(32 * 64);
    issued = w.now();
    w.tcgen05_ld(t, TmemShape::S32x32b, 64, regs);  // 8 KiB at 128 B/cycle = 64 cycles, from issue + 1
    co_await w.tcgen05_wait_ld();                   // passes 30 cycles (access latency) after the transfer
    ready = w.now();
    w.tcgen05_dealloc(t, 64);
  });
  EXPECT_EQ(ready - issued, 1u + 64u + 30u);
}

TEST(TmemLoadTest, LaneQuadrantRule) {
  const auto e = expect_misuse(
      [] {
        run_cta(
            [](Warp& w) -> Task {
              if (w.warp_idx() == 0) co_await w.tcgen05_alloc(kSlot, 32);
              co_await w.syncthreads();
              std::vector<std::uint32_t> regs(32);
              if (w.warp_idx() == 1) w.tcgen05_ld(TmemAddr::at(0, 0), TmemShape::S32x32b, 1, regs);
            },
            64);
      },
      Rule::TmemLaneQuadrant);
  EXPECT_NE(std::string(e.what()).find("warp 1 may access TMEM lanes 32..63"), std::string::npos) << e.what();
}

TEST(TmemLoadTest, InvalidShapesCountsAndRegisterSpansAreMisuse) {
  auto ld = [](TmemShape shape, std::uint32_t num, std::size_t regs, std::uint32_t half_split) {
    return [=](Warp& w) -> Task {
      const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 512);
      std::vector<std::uint32_t> r(regs);
      w.tcgen05_ld(d, shape, num, r, false, half_split);
    };
  };
  const MisuseError e = expect_misuse([&] { run_cta(ld(TmemShape::S32x32b, 3, 96, 0)); }, Rule::TmemAccessInvalid);
  EXPECT_NE(std::string(e.what()).find(".32x32b.x3 is not a valid shape/count"), std::string::npos) << e.what();
  expect_misuse([&] { run_cta(ld(TmemShape::S16x256b, 64, 32 * 256, 0)); }, Rule::TmemAccessInvalid);  // 256 regs
  expect_misuse([&] { run_cta(ld(TmemShape::S16x128b, 2, 32 * 2, 0)); }, Rule::TmemAccessInvalid);     // needs 4 each
  expect_misuse([&] { run_cta(ld(TmemShape::S32x32b, 1, 32, 8)); }, Rule::TmemAccessInvalid);          // half split
}

TEST(TmemLoadTest, OutsideTheAllocation) {
  expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 32);
          std::vector<std::uint32_t> regs(32 * 64);
          w.tcgen05_ld(t, TmemShape::S32x32b, 64, regs);  // 64 columns of a 32-column allocation
        });
      },
      Rule::TmemOutOfAllocation);
}

// ---------------------------------------------------------------------------------- MMA

using test::core_offset;

void put_bf16(Warp& w, SmemAddr base, std::uint32_t r, std::uint32_t k, float v) {
  const std::uint16_t b = float_to_bf16(v);
  w.st_shared(base + core_offset(r, k), std::as_bytes(std::span<const std::uint16_t>(&b, 1)));
}

SmemDescriptor core_desc(SmemAddr base) {
  return encode(SmemDescriptorFields{.start_address = base.offset, .leading_byte_offset = 128, .stride_byte_offset = 256});
}

TEST(MmaTest, AccumulateOffOverwritesAndOnAdds) {
  // A[m][k] = 1 for k == m % 16, B[n][k] = k + n: D[m][n] = (m % 16) + n. With D preloaded to 1000,
  // accumulate off gives D = A B^T, on gives 1000 + A B^T.
  for (bool accumulate : {false, true}) {
    std::vector<std::uint32_t> row(32 * 16);
    run_cta([&](Warp& w) -> Task {
      const SmemAddr a{1024}, b{1024 + 16 * 256};
      for (std::uint32_t m = 0; m < 128; ++m)
        for (std::uint32_t k = 0; k < 16; ++k) put_bf16(w, a, m, k, k == m % 16 ? 1.0f : 0.0f);
      for (std::uint32_t n = 0; n < 16; ++n)
        for (std::uint32_t k = 0; k < 16; ++k) put_bf16(w, b, n, k, static_cast<float>(k + n));
      w.fence_proxy_async();
      const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32);
      std::vector<std::uint32_t> init(32 * 16, std::bit_cast<std::uint32_t>(1000.0f));
      w.tcgen05_st(d, TmemShape::S32x32b, 16, init);
      co_await w.tcgen05_wait_st();
      w.mbarrier_init(kBar, 1);
      w.tcgen05_mma(MmaKind::F16, d, core_desc(a), core_desc(b), encode(MmaKind::F16, {.m = 128, .n = 16}), accumulate);
      w.tcgen05_commit(kBar);
      co_await w.mbarrier_wait(kBar, 0);
      w.tcgen05_ld(d, TmemShape::S32x32b, 16, row);  // rows 0..31
      co_await w.tcgen05_wait_ld();
      w.tcgen05_dealloc(d, 32);
    }, 32, 16384);
    for (std::uint32_t m : {0u, 5u, 17u, 31u})
      for (std::uint32_t n : {0u, 3u, 15u})
        EXPECT_EQ(std::bit_cast<float>(row[m * 16 + n]), (accumulate ? 1000.0f : 0.0f) + static_cast<float>(m % 16 + n))
            << "m " << m << " n " << n << " accumulate " << accumulate;
  }
}

// Exact cycles of one MMA, issue -> commit -> wait returns, on unit_test.yaml: the MMA issues at
// t (1 cycle), the pipe starts at t + 1; D is done math + latency later; the commit (issued at
// t + 1) arrives 5 cycles after D, and the waiter resumes 10 later: 16 + math + latency.
struct MmaTiming {
  const char* name;
  MmaKind kind;
  DataType type;
  std::uint32_t m, n;
  bool ts;
  Cycle want;
  ScaleVec vec = ScaleVec::X1;  // the block-scaled kinds' .scale_vec and factor type
  DataType scale = DataType::UE8M0;
};

class MmaTimingTest : public testing::TestWithParam<MmaTiming> {};

TEST_P(MmaTimingTest, OneMmaTakesTheCyclesDerivedFromTheConfig) {
  const MmaTiming& c = GetParam();
  Cycle elapsed = 0;
  run_cta([&](Warp& w) -> Task {
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 512);
    w.mbarrier_init(kBar, 1);
    const SmemAddr a{1024}, b{1024 + 128 * 32};
    const auto idesc = encode(c.kind, {.a_type = c.type, .b_type = c.type,
                                       .d_type = c.kind == MmaKind::I8 ? DataType::S32 : DataType::F32, .m = c.m,
                                       .n = c.n, .scale_type = c.scale});
    const Cycle t = w.now();
    if (is_block_scaled(c.kind))
      w.tcgen05_mma(c.kind, d, core_desc(a), core_desc(b), idesc, {d + 256, d + 300, c.vec}, false);
    else if (c.ts)
      w.tcgen05_mma(c.kind, d, d + 256, core_desc(b), idesc, false);
    else
      w.tcgen05_mma(c.kind, d, core_desc(a), core_desc(b), idesc, false);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    elapsed = w.now() - t;
    w.tcgen05_dealloc(d, 512);
  }, 32, 32768, Mode::Timing);
  EXPECT_EQ(elapsed, c.want);
}

// math = 2*128*N*K / rate (M = 64 pays the M = 128 time): bf16 8192/cycle -> N/2, fp8 16384 with
// K = 32 -> N/2; tf32 K 8 at 4096, i8 K 32 at 16384, FP4 of f8f6f4 K 32 at 16384, mxf8f6f4 K 32
// at 16384 and mxf4* K 64 at 32768: N/2 every time. latency: SS 100, SS M=64 80, TS 60, plus
// block_scale_latency 5 for the block-scaled kinds.
INSTANTIATE_TEST_SUITE_P(
    ShapesAndKinds, MmaTimingTest,
    testing::Values(MmaTiming{"Bf16M128N256", MmaKind::F16, DataType::BF16, 128, 256, false, 16 + 128 + 100},
                    MmaTiming{"F16M128N16", MmaKind::F16, DataType::F16, 128, 16, false, 16 + 8 + 100},
                    MmaTiming{"Bf16M64N64", MmaKind::F16, DataType::BF16, 64, 64, false, 16 + 32 + 80},
                    MmaTiming{"Bf16M64N8", MmaKind::F16, DataType::BF16, 64, 8, false, 16 + 4 + 80},
                    MmaTiming{"E4m3M128N128", MmaKind::F8F6F4, DataType::E4M3, 128, 128, false, 16 + 64 + 100},
                    MmaTiming{"E5m2M64N256", MmaKind::F8F6F4, DataType::E5M2, 64, 256, false, 16 + 128 + 80},
                    MmaTiming{"TsBf16M128N64", MmaKind::F16, DataType::BF16, 128, 64, true, 16 + 32 + 60},
                    MmaTiming{"Tf32M128N128", MmaKind::TF32, DataType::TF32, 128, 128, false, 16 + 64 + 100},
                    MmaTiming{"I8M128N128", MmaKind::I8, DataType::S8, 128, 128, false, 16 + 64 + 100},
                    MmaTiming{"E2m1M128N128", MmaKind::F8F6F4, DataType::E2M1, 128, 128, false, 16 + 64 + 100},
                    MmaTiming{"Mxf8M128N128", MmaKind::MXF8F6F4, DataType::E4M3, 128, 128, false, 16 + 64 + 100 + 5},
                    MmaTiming{"Mxf4M128N128", MmaKind::MXF4, DataType::E2M1, 128, 128, false, 16 + 64 + 100 + 5,
                              ScaleVec::X2},
                    MmaTiming{"Nvf4M128N128", MmaKind::MXF4NVF4, DataType::E2M1, 128, 128, false,
                              16 + 64 + 100 + 5, ScaleVec::X4, DataType::UE4M3}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(MmaTest, SmemOperandBandwidthBoundsBackToBackSsMmas) {
  // M=128 N=64 bf16 SS: math 32 cycles, operands (4096 + 2048) B / 128 B/cycle = 48 cycles, so the
  // second MMA starts 48 after the first: done at t + 1 + 48 + 32 + 100; +15 commit and wake.
  Cycle elapsed = 0;
  run_cta([&](Warp& w) -> Task {
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 64);
    w.mbarrier_init(kBar, 1);
    const auto idesc = encode(MmaKind::F16, {.m = 128, .n = 64});
    const Cycle t = w.now();
    w.tcgen05_mma(MmaKind::F16, d, core_desc(SmemAddr{1024}), core_desc(SmemAddr{8192}), idesc, false);
    w.tcgen05_mma(MmaKind::F16, d, core_desc(SmemAddr{1024}), core_desc(SmemAddr{8192}), idesc, true);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    elapsed = w.now() - t;
    w.tcgen05_dealloc(d, 64);
  }, 32, 32768, Mode::Timing);
  EXPECT_EQ(elapsed, 1u + 48u + 32u + 100u + 15u);
}

TEST(MmaTest, InvalidShapeIsAMisuse) {
  expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 256);
          w.tcgen05_mma(MmaKind::F16, d, core_desc(SmemAddr{1024}), core_desc(SmemAddr{8192}),
                        InstrDescriptor{encode(MmaKind::F16, {.m = 128, .n = 256}).raw & ~(63u << 17)}, false);  // N = 0
        }, 32, 32768);
      },
      Rule::MmaInvalid);
}

TEST(MmaTest, AccumulatorOutsideTheAllocationIsAMisuse) {
  expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 128);
          w.tcgen05_mma(MmaKind::F16, d, core_desc(SmemAddr{1024}), core_desc(SmemAddr{8192}),
                        encode(MmaKind::F16, {.m = 128, .n = 256}), false);
        }, 32, 32768);
      },
      Rule::TmemOutOfAllocation);
}

TEST(MmaTest, M128AcceptsNMultiplesOf8AsThePtxIsaDoes) {
  Cycle elapsed = 0;
  run_cta([&](Warp& w) -> Task {
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 32);
    w.mbarrier_init(kBar, 1);
    const Cycle t = w.now();
    w.tcgen05_mma(MmaKind::F16, d, core_desc(SmemAddr{1024}), core_desc(SmemAddr{8192}),
                  encode(MmaKind::F16, {.m = 128, .n = 24}), false);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    elapsed = w.now() - t;
    w.tcgen05_dealloc(d, 32);
  }, 32, 32768, Mode::Timing);
  // math 12, SMEM (4096 + 768) / 128 = 38 (the interval, not the latency), latency 100, +16.
  EXPECT_EQ(elapsed, 16u + 12u + 100u);
}
}  // namespace
}  // namespace bwsim
