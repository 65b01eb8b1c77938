// wgmma.mma_async (SM90) on unit_test.yaml (4096 f16 / 8192 f8 FLOP per cycle, 128 B/clk of SMEM
// operands, latency 50 SS / 40 RS, issue 1): descriptor bits and fragment layouts against hand
// tables, exact cycles, products against a reference, and every misuse rule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "TestSupport.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

// --- descriptor and fragments ----------------------------------------------------------------

TEST(GmmaDescriptorTest, EncodesTheSm90BitPositions) {
  // start 0x400 >> 4 = 0x40 at bit 0, LBO 16 >> 4 = 1 at bit 16, SBO 1024 >> 4 = 64 at bit 32,
  // layout 128B = 1 at bit 62 (no version bits 46-48, unlike tcgen05's descriptor).
  const GmmaDescriptor d =
      encode(GmmaDescriptorFields{.start_address = 0x400, .leading_byte_offset = 16, .stride_byte_offset = 1024,
                                  .layout = GmmaLayout::Swizzle128B});
  EXPECT_EQ(d.raw, 0x4000004000010040ull);
  EXPECT_EQ(k_major_swizzle128_descriptor(0x400).raw, d.raw);  // the tile descriptor the kernels use
  EXPECT_EQ(encode(GmmaDescriptorFields{.start_address = 0x3fff0, .layout = GmmaLayout::Swizzle32B}).raw,
            0xC000000000003fffull);
  EXPECT_EQ(encode(GmmaDescriptorFields{.start_address = 0x80, .stride_byte_offset = 256,
                                        .layout = GmmaLayout::Swizzle64B}).raw,
            0x8000001000000008ull);
  GmmaDescriptorFields f;
  ASSERT_FALSE(decode(d, f));
  EXPECT_EQ(f.start_address, 0x400u);
  EXPECT_EQ(f.leading_byte_offset, 16u);
  EXPECT_EQ(f.stride_byte_offset, 1024u);
  EXPECT_EQ(f.layout, GmmaLayout::Swizzle128B);
  EXPECT_EQ(operand_fields(f).layout, UmmaLayout::Swizzle128B);
  EXPECT_TRUE(decode(GmmaDescriptor{d.raw | (3ull << 49)}, f).has_value());  // base offset: not modeled
  for (const unsigned bit : {14u, 15u, 30u, 31u, 46u, 47u, 48u, 52u, 61u}) {  // reserved
    const auto err = decode(GmmaDescriptor{d.raw | (1ull << bit)}, f);
    ASSERT_TRUE(err.has_value()) << bit;
    EXPECT_NE(err->find("reserved bits"), std::string::npos) << *err;
  }
}

TEST(GmmaFragmentTest, AccumulatorAndAFragmentsMatchTheHandTable) {
  struct Acc {
    std::uint32_t warp, lane, reg, row, col;
  };
  for (const Acc& c : {Acc{0, 0, 0, 0, 0}, Acc{0, 0, 1, 0, 1}, Acc{0, 0, 2, 8, 0}, Acc{0, 3, 3, 8, 7},
                       Acc{1, 5, 6, 25, 10}, Acc{3, 31, 127, 63, 255}, Acc{2, 4, 4, 33, 8}}) {
    const FragmentCoord f = wgmma_accumulator_coord(c.warp, c.lane, c.reg);
    EXPECT_EQ(f.row, c.row) << c.warp << "/" << c.lane << "/" << c.reg;
    EXPECT_EQ(f.col, c.col) << c.warp << "/" << c.lane << "/" << c.reg;
  }
  struct A {
    DataType t;
    std::uint32_t warp, lane, e, row, k;
  };
  for (const A& c : {A{DataType::BF16, 0, 6, 5, 1, 13}, A{DataType::BF16, 0, 0, 2, 8, 0}, A{DataType::F16, 3, 31, 7, 63, 15},
                     A{DataType::E4M3, 2, 7, 13, 41, 29}, A{DataType::E4M3, 0, 1, 3, 0, 7}}) {
    const FragmentCoord f = wgmma_a_coord(c.t, c.warp, c.lane, c.e);
    EXPECT_EQ(f.row, c.row) << c.lane << "/" << c.e;
    EXPECT_EQ(f.col, c.k) << c.lane << "/" << c.e;
  }
}

TEST(WgmmaShapeTest, AcceptsWhatPtxDefines) {
  EXPECT_FALSE(validate(WgmmaShape{.n = 8}));
  EXPECT_FALSE(validate(WgmmaShape{.a_type = DataType::E4M3, .b_type = DataType::E5M2, .n = 256}));
  EXPECT_TRUE(validate(WgmmaShape{.n = 12}));
  EXPECT_TRUE(validate(WgmmaShape{.n = 264}));
  EXPECT_TRUE(validate(WgmmaShape{.a_type = DataType::BF16, .b_type = DataType::F16}));
  EXPECT_TRUE(validate(WgmmaShape{.a_type = DataType::E4M3, .b_type = DataType::E4M3, .a_major = Major::MN}));
  EXPECT_EQ(describe(WgmmaShape{.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 64}), "m64n64k32.f32.e4m3.e4m3");
}

// --- timing ------------------------------------------------------------------------------------

constexpr std::uint32_t kA = 1024, kB = kA + 64 * 128;  // 128B-swizzled K-major tiles, 64 bf16 of K
GmmaDescriptor desc(std::uint32_t at) { return k_major_swizzle128_descriptor(at); }
constexpr std::uint32_t kSmem = kB + 256 * 128;

// Each warp of warpgroup(s) `groups`: fence, `count` wgmmas of `shape`, commit, wait 0; returns
// the cycles from its first instruction to the wait's end (the same for every warp).
Cycle time_wgmmas(WgmmaShape shape, std::uint32_t count, bool rs = false, std::uint32_t groups = 1) {
  std::vector<Cycle> took(4 * groups);
  test::run_cta(
      [&](Warp& w) -> Task {
        WgmmaAccumulator acc(w, shape.n);
        const std::vector<std::uint32_t> a(32 * kWgmmaARegisters, 0);
        const Cycle t0 = w.now();
        w.wgmma_fence();
        for (std::uint32_t i = 0; i < count; ++i) {
          if (rs) w.wgmma(acc, a, desc(kB), shape, i > 0);
          else w.wgmma(acc, desc(kA), desc(kB), shape, i > 0);
        }
        w.wgmma_commit_group();
        co_await w.wgmma_wait_group(0);
        took[w.warp_idx()] = w.now() - t0;
      },
      128 * groups, kSmem);
  for (Cycle c : took) EXPECT_EQ(c, took[0]);
  return took[0];
}

TEST(WgmmaTimingTest, OneInstructionTakesIssueMathAndLatency) {
  // fence (1) + wgmma issue (1) + pipe start (1) = start at 2; m64n256k16: 2*64*256*16 / 4096 = 128
  // math cycles (SMEM (64 + 256) * 32 B / 128 = 80 is shorter); latency SS 50: done at 180.
  EXPECT_EQ(time_wgmmas(WgmmaShape{.n = 256}, 1), 180u);
  // RS: B only (64 cycles of SMEM), latency 40: 2 + 128 + 40.
  EXPECT_EQ(time_wgmmas(WgmmaShape{.n = 256}, 1, true), 170u);
  // e4m3 m64n256k32: 2*64*256*32 / 8192 = 128 as well.
  EXPECT_EQ(time_wgmmas(WgmmaShape{.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 256}, 1), 180u);
}

TEST(WgmmaTimingTest, SmallNIsBoundBySmemOperands) {
  // m64n32k16: math 16, SMEM (64 + 32) * 32 / 128 = 24: the second starts at 2 + 24 = 26 and is
  // done at 26 + 16 + 50 = 92.
  EXPECT_EQ(time_wgmmas(WgmmaShape{.n = 32}, 2), 92u);
  // RS reads B only (8 cycles): math-bound, the second at 2 + 16 = 18, done 18 + 16 + 40 = 74.
  EXPECT_EQ(time_wgmmas(WgmmaShape{.n = 32}, 2, true), 74u);
}

TEST(WgmmaTimingTest, WarpgroupsShareTheSmsPipe) {
  // Two warpgroups each issue one m64n256k16 at the same cycle: the second starts 128 later,
  // done at 2 + 128 + 128 + 50 = 308 (both warpgroups wait for their own).
  std::vector<Cycle> took(8);
  test::run_cta(
      [&](Warp& w) -> Task {
        WgmmaAccumulator acc(w, 256);
        const Cycle t0 = w.now();
        w.wgmma_fence();
        w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.n = 256}, false);
        w.wgmma_commit_group();
        co_await w.wgmma_wait_group(0);
        took[w.warp_idx()] = w.now() - t0;
      },
      256, kSmem);
  for (std::uint32_t i = 0; i < 8; ++i) EXPECT_EQ(took[i], i < 4 ? 180u : 308u) << "warp " << i;
}

TEST(WgmmaTimingTest, WaitGroupLeavesTheNewestGroupsPending) {
  // Two groups of one m64n256k16 each: done at 180 and 308. wait_group 1 returns at the first's
  // completion, wait_group 0 at the second's.
  Cycle first = 0, second = 0;
  test::run_cta(
      [&](Warp& w) -> Task {
        WgmmaAccumulator a0(w, 256), a1(w, 256);
        const Cycle t0 = w.now();
        w.wgmma_fence();                                               // 0
        w.wgmma(a0, desc(kA), desc(kB), WgmmaShape{.n = 256}, false);  // 1: start 2, done 180
        w.wgmma_commit_group();                                        // 2
        w.wgmma(a1, desc(kA), desc(kB), WgmmaShape{.n = 256}, false);  // 3: start 130, done 308
        w.wgmma_commit_group();                                        // 4
        co_await w.wgmma_wait_group(1);                                // 5
        first = w.now() - t0;
        co_await w.wgmma_wait_group(0);
        second = w.now() - t0;
      },
      128, kSmem);
  EXPECT_EQ(first, 180u);
  EXPECT_EQ(second, 308u);
}

// --- functional --------------------------------------------------------------------------------

// Small integers: every product and sum is exact in fp32, so the result is bit-exact.
float a_value(std::uint32_t m, std::uint32_t k) { return static_cast<float>(static_cast<int>((m * 7 + k * 3) % 9) - 4); }
float b_value(std::uint32_t n, std::uint32_t k) { return static_cast<float>(static_cast<int>((n * 5 + k * 11) % 7) - 3); }

// Warp 0 writes A (64 x 64) and B (N x 64) as bf16 into 128B-swizzled K-major tiles.
void write_operands(Warp& w, std::uint32_t n) {
  std::vector<std::byte> row(128);
  for (std::uint32_t r = 0; r < 64 + n; ++r) {
    const bool is_a = r < 64;
    const std::uint32_t base = is_a ? kA + r * 128 : kB + (r - 64) * 128;
    for (std::uint32_t k = 0; k < 64; ++k) {
      const std::uint16_t v = float_to_bf16(is_a ? a_value(r, k) : b_value(r - 64, k));
      std::memcpy(&row[swizzle_offset(Swizzle::B128, base + 2 * k) - base], &v, 2);
    }
    w.st_shared(SmemAddr{base}, row);
  }
}

// The A fragment of k-step kk (16 of K) as a warp's registers.
std::vector<std::uint32_t> a_fragment(std::uint32_t warp_in_group, std::uint32_t kk) {
  std::vector<std::uint32_t> regs(32 * kWgmmaARegisters, 0);
  for (std::uint32_t lane = 0; lane < 32; ++lane)
    for (std::uint32_t e = 0; e < 8; ++e) {
      const FragmentCoord c = wgmma_a_coord(DataType::BF16, warp_in_group, lane, e);
      regs[lane * kWgmmaARegisters + e / 2] |= std::uint32_t{float_to_bf16(a_value(c.row, 16 * kk + c.col))}
                                               << (16 * (e % 2));
    }
  return regs;
}

void check_product(bool rs) {
  constexpr std::uint32_t N = 64;
  std::uint32_t checked = 0;
  test::run_cta(
      [&](Warp& w) -> Task {
        if (w.warp_idx() == 0) write_operands(w, N);
        w.fence_proxy_async();
        co_await w.syncthreads();
        WgmmaAccumulator acc(w, N);
        w.wgmma_fence();
        for (std::uint32_t kk = 0; kk < 4; ++kk) {
          if (rs) w.wgmma(acc, a_fragment(w.warp_idx() % 4, kk), desc(kB + 32 * kk), WgmmaShape{.n = N}, kk > 0);
          else w.wgmma(acc, desc(kA + 32 * kk), desc(kB + 32 * kk), WgmmaShape{.n = N}, kk > 0);
        }
        w.wgmma_commit_group();
        co_await w.wgmma_wait_group(0);
        const auto v = acc.values();
        for (std::uint32_t lane = 0; lane < 32; ++lane)
          for (std::uint32_t r = 0; r < N / 2; ++r) {
            const FragmentCoord c = wgmma_accumulator_coord(w.warp_idx() % 4, lane, r);
            float ref = 0;
            for (std::uint32_t k = 0; k < 64; ++k) ref += a_value(c.row, k) * b_value(c.col, k);
            EXPECT_EQ(v[lane * N / 2 + r], ref) << "row " << c.row << " col " << c.col;
            ++checked;
          }
      },
      128, kSmem);
  EXPECT_EQ(checked, 64u * N);
}

TEST(WgmmaFunctionalTest, SsProductMatchesTheReferenceExactly) { check_product(false); }
TEST(WgmmaFunctionalTest, RsProductMatchesTheReferenceExactly) { check_product(true); }

// --- misuse ------------------------------------------------------------------------------------

RunResult run_group(const WarpProgram& p, std::uint32_t threads = 128) { return test::run_cta(p, threads, kSmem); }

TEST(WgmmaMisuseTest, AccumulatorReadBeforeWaitGroupIsARace) {
  auto program = [](bool wait) {
    return [wait](Warp& w) -> Task {
      WgmmaAccumulator acc(w, 64);
      w.wgmma_fence();
      w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.n = 64}, false);
      w.wgmma_commit_group();
      if (wait) co_await w.wgmma_wait_group(0);
      (void)acc.values();
    };
  };
  EXPECT_NO_THROW(run_group(program(true)));
  EXPECT_SIM_MISUSE(run_group(program(false)), Rule::RaceEarlyAccumulatorRead);
}

TEST(WgmmaMisuseTest, WgmmaNeedsAFenceAfterRegisterAccess) {
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator acc(w, 64);
                      w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.n = 64}, false);
                      co_return;
                    }),
                    Rule::WgmmaMisuse);
  // Touching the accumulator after the fence needs another one.
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator acc(w, 64);
                      w.wgmma_fence();
                      w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.n = 64}, false);
                      w.wgmma_commit_group();
                      co_await w.wgmma_wait_group(0);
                      (void)acc.values();
                      w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.n = 64}, true);
                    }),
                    Rule::WgmmaMisuse);
}

// A in registers is K-major by definition (PTX: .trans-a applies to A in SMEM only).
TEST(WgmmaMisuseTest, AInRegistersCannotBeMnMajor) {
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator acc(w, 64);
                      const std::vector<std::uint32_t> a(32 * kWgmmaARegisters, 0);
                      w.wgmma_fence();
                      w.wgmma(acc, a, desc(kB), WgmmaShape{.n = 64, .a_major = Major::MN}, false);
                      co_return;
                    }),
                    Rule::WgmmaMisuse);
}

TEST(WgmmaMisuseTest, WarpgroupMustAgreeAndBeWhole) {
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator acc(w, 64);
                      w.wgmma_fence();
                      w.wgmma(acc, desc(kA), desc(w.warp_idx() == 2 ? kB + 1024 : kB), WgmmaShape{.n = 64}, false);
                      co_return;
                    }),
                    Rule::WgmmaMisuse);
  EXPECT_SIM_MISUSE(run_group(
                        [](Warp& w) -> Task {
                          WgmmaAccumulator acc(w, 64);
                          w.wgmma_fence();
                          w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.n = 64}, false);
                          co_return;
                        },
                        64),
                    Rule::WgmmaMisuse);
  // A shape PTX does not define, and an accumulator of another N.
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator acc(w, 64);
                      w.wgmma_fence();
                      w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.n = 128}, false);
                      co_return;
                    }),
                    Rule::WgmmaMisuse);
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator acc(w, 64);
                      w.wgmma_fence();
                      w.wgmma(acc, desc(kA), desc(kB), WgmmaShape{.a_type = DataType::BF16, .b_type = DataType::E4M3, .n = 64},
                              false);
                      co_return;
                    }),
                    Rule::WgmmaMisuse);
}

TEST(WgmmaMisuseTest, OperandsOutsideSmemAreLocated) {
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator acc(w, 256);
                      w.wgmma_fence();
                      w.wgmma(acc, desc(kA), desc(kSmem - 1024), WgmmaShape{.n = 256}, false);
                      co_return;
                    }),
                    Rule::SmemOutOfBounds);
}

TEST(WgmmaMisuseTest, AccumulatorsCountAgainstTheRegisterBudget) {
  // 128 threads start with 256 registers: two N = 256 fragments (128 each) fit, a third does not.
  EXPECT_NO_THROW(run_group([](Warp& w) -> Task {
    WgmmaAccumulator a(w, 256), b(w, 256);
    co_return;
  }));
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator a(w, 256), b(w, 256), c(w, 16);
                      co_return;
                    }),
                    Rule::WgmmaMisuse);
  // setmaxnreg.dec below the live accumulators.
  EXPECT_SIM_MISUSE(run_group([](Warp& w) -> Task {
                      WgmmaAccumulator a(w, 256);
                      w.setmaxnreg_dec(120);
                      co_return;
                    }),
                    Rule::SetmaxnregMisuse);
}

TEST(WgmmaMisuseTest, BlackwellConfigHasNoWgmma) {
  Simulator sim(test::b200_config(), SimOptions{});
  try {
    sim.launch("wgmma", LaunchConfig{.grid_ctas = 1, .block_threads = 128, .dynamic_smem_bytes = kSmem},
               [](Warp& w) -> Task {
                 w.wgmma_fence();
                 co_return;
               });
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has no wgmma"), std::string::npos) << e.what();
  }
}

// Warp 4 loads a 128 x 64 bf16 tile (A rows 0-63, B rows 64-127) twice into the same stage;
// warpgroup 0 runs one wgmma on the first load and releases the stage on `empty` (count 4),
// either after wgmma.wait_group 0 (correct) or right after the commit (the wgmma may still be
// reading when the second load lands).
void stage_reuse(bool wait_before_release) {
  Simulator sim(test::unit_config(), SimOptions{});
  const GmemAddr src = sim.gmem().alloc(128 * 128);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::BF16, .address = src, .dims = {64, 128}, .strides = {128},
                                          .box = {64, 128}, .swizzle = Swizzle::B128});
  constexpr MBarrierRef full{8}, empty{16};
  sim.launch("reuse", LaunchConfig{.grid_ctas = 1, .block_threads = 160, .dynamic_smem_bytes = kSmem},
             [&](Warp& w) -> Task {
               if (w.warp_idx() == 4) {
                 w.mbarrier_init(full, 1);
                 w.mbarrier_init(empty, 4);
               }
               co_await w.syncthreads();
               if (w.warp_idx() == 4) {
                 w.mbarrier_arrive_expect_tx(full, 16384);
                 w.tma_load(map, SmemAddr{kA}, full, {0, 0});
                 co_await w.mbarrier_wait(empty, 0);
                 w.mbarrier_arrive_expect_tx(full, 16384);
                 w.tma_load(map, SmemAddr{kA}, full, {0, 0});
                 co_await w.mbarrier_wait(full, 1);
                 co_return;
               }
               WgmmaAccumulator acc(w, 64);
               co_await w.mbarrier_wait(full, 0);
               w.wgmma_fence();
               w.wgmma(acc, desc(kA), desc(kA + 64 * 128), WgmmaShape{.n = 64}, false);
               w.wgmma_commit_group();
               if (wait_before_release) co_await w.wgmma_wait_group(0);
               w.mbarrier_arrive(empty);
               co_await w.wgmma_wait_group(0);
             });
}

TEST(WgmmaMisuseTest, StageReleasedBeforeWaitGroupIsReusedTooEarly) {
  EXPECT_NO_THROW(stage_reuse(true));
  EXPECT_SIM_MISUSE(stage_reuse(false), Rule::RaceStageReuse);
}

}  // namespace
}  // namespace bwsim
