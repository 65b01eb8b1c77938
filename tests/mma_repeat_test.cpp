// A warp's repeated tcgen05.mma (MmaRepeat: the next MMA of a K loop, checked only where it can
// differ from the last): it times as every MMA does, and each misuse the full checks find in it is
// still found, with the same report.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {
namespace {

using test::core_offset;
using test::expect_misuse;
using test::run_clusters;
using test::run_cta;

constexpr SmemAddr kSlot{0};
constexpr MBarrierRef kBar{8};
constexpr std::uint32_t kSmem = 32768;

// Core-matrix layout (no swizzle): K-adjacent 8x16-byte cores 128 bytes apart, 8-row groups
// `sbo` apart. Rows r of a K = 16 bf16 operand span r / 8 groups.
SmemDescriptor desc(std::uint32_t start, std::uint32_t sbo = 256) {
  return encode(SmemDescriptorFields{.start_address = start, .leading_byte_offset = 128, .stride_byte_offset = sbo});
}

const InstrDescriptor kIdesc = encode(MmaKind::F16, {.m = 128, .n = 64});  // B: 8 groups of 256 bytes

TEST(MmaRepeatTest, AKLoopOfRepeatsTimesAsBackToBackMmas) {
  // M=128 N=64 bf16 SS on unit_test.yaml: math 32 cycles, operands (4096 + 2048) B / 128 B/cycle =
  // 48, so each MMA starts 48 after the last: the fourth at t + 1 + 3 * 48, done 32 + 100 later;
  // the commit's arrival and the wake take 15 more.
  Cycle elapsed = 0;
  const RunResult r = run_cta([&](Warp& w) -> Task {
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 64);
    w.mbarrier_init(kBar, 1);
    const Cycle t = w.now();
    for (std::uint32_t kb = 0; kb < 4; ++kb)
      w.tcgen05_mma(MmaKind::F16, d, desc(1024 + 32 * kb), desc(16384 + 32 * kb), kIdesc, kb > 0);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    elapsed = w.now() - t;
    w.tcgen05_dealloc(d, 64);
  }, 32, kSmem, Mode::Timing);
  EXPECT_EQ(elapsed, 1u + 3u * 48u + 32u + 100u + 15u);
  EXPECT_EQ(r.mma.mmas, 4u);
}

// B at `b_start` with SBO `sbo`, after `before` MMAs with B at 16384.
MisuseError b_outside_smem(std::uint32_t before, std::uint32_t b_start, std::uint32_t sbo) {
  return expect_misuse(
      [&] {
        run_cta([&](Warp& w) -> Task {
          const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 64);
          for (std::uint32_t i = 0; i < before; ++i)
            w.tcgen05_mma(MmaKind::F16, d, desc(1024), desc(16384), kIdesc, i > 0);
          w.tcgen05_mma(MmaKind::F16, d, desc(1024), desc(b_start, sbo), kIdesc, true);
        }, 32, kSmem, Mode::Timing);
      },
      Rule::SmemOutOfBounds);
}

TEST(MmaRepeatTest, ARepeatReachingPastSmemIsTheErrorTheFullChecksReport) {
  // B's 8 groups of 256 bytes from 31232 end at 33280, past the 32768 bytes of SMEM.
  const MisuseError cold = b_outside_smem(0, 31232, 256), repeated = b_outside_smem(2, 31232, 256);
  EXPECT_NE(std::string(repeated.what()).find("B operand [0x7a00, 0x8200)"), std::string::npos) << repeated.what();
  EXPECT_EQ(repeated.detail(), cold.detail());
  EXPECT_EQ(repeated.where().op, cold.where().op);
}

TEST(MmaRepeatTest, ADescriptorWithAnotherStrideIsSpannedAgain) {
  // The same B start with SBO 512 instead of 256: 8 groups of 512 bytes from 30720 end at 34816.
  b_outside_smem(2, 30720, 256 * 2);
}

TEST(MmaRepeatTest, AnAccumulatorDeallocatedSinceTheLastMmaIsOutsideTheAllocation) {
  expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 64);
          w.mbarrier_init(kBar, 1);
          w.tcgen05_mma(MmaKind::F16, d, desc(1024), desc(16384), kIdesc, false);
          w.tcgen05_commit(kBar);
          co_await w.mbarrier_wait(kBar, 0);
          w.tcgen05_dealloc(d, 64);
          co_await w.sleep(100);  // the columns are free tmem.alloc_cycles after the dealloc issues
          w.tcgen05_mma(MmaKind::F16, d, desc(1024 + 32), desc(16384 + 32), kIdesc, true);
        }, 32, kSmem, Mode::Timing);
      },
      Rule::TmemOutOfAllocation);
}

TEST(MmaRepeatTest, ARepeatWithATmemAPastTheAllocationIsOutsideIt) {
  // A in TMEM: K = 16 bf16 takes 8 columns, so A at column 508 of 512 reaches 516.
  const MisuseError e = expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 512);
          for (const std::uint32_t col : {256u, 264u, 508u})
            w.tcgen05_mma(MmaKind::F16, d, d + col, desc(16384), kIdesc, col > 256);
        }, 32, kSmem, Mode::Timing);
      },
      Rule::TmemOutOfAllocation);
  EXPECT_NE(e.detail().find("columns [508, 516)"), std::string::npos) << e.what();
}

TEST(MmaRepeatTest, AnInvalidCtaGroupIsNotARepeat) {
  expect_misuse(
      [] {
        run_cta([](Warp& w) -> Task {
          const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 64);
          w.tcgen05_mma(MmaKind::F16, d, desc(1024), desc(16384), kIdesc, false);
          w.tcgen05_mma(MmaKind::F16, d, desc(1024), desc(16384), kIdesc, true, 3);
        }, 32, kSmem, Mode::Timing);
      },
      Rule::MmaInvalid);
}

// The leader repeats its cta_group::2 MMA after rank 1 freed its columns (`free`) and then, or
// instead, exited (`exit`).
MisuseError pair_repeat_after_peer(bool free, bool exit, Rule rule) {
  return expect_misuse(
      [&] {
        run_clusters(
            [free, exit](Warp& w) -> Task {
              const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 64, 2);
              w.mbarrier_init(kBar, 1);
              w.cluster_arrive();
              co_await w.cluster_wait();
              const auto idesc = encode(MmaKind::F16, {.m = 256, .n = 64});
              if (w.cluster_ctarank() == 0) {
                w.tcgen05_mma(MmaKind::F16, d, desc(1024), desc(16384), idesc, false, 2);
                w.tcgen05_commit(kBar, 0b11);
              }
              co_await w.mbarrier_wait(kBar, 0);
              if (w.cluster_ctarank() == 1) {
                if (free) w.tcgen05_dealloc(d, 64, 2);
                if (!exit) co_await w.sleep(5000);
                co_return;
              }
              co_await w.sleep(1000);
              w.tcgen05_mma(MmaKind::F16, d, desc(1024 + 32), desc(16384 + 32), idesc, true, 2);
            },
            {2, 1, 1}, 2, 32, kSmem, Mode::Timing);
      },
      rule);
}

TEST(MmaRepeatTest, APairMmaAfterThePeerExitedIsAnError) {
  for (const bool free : {true, false}) {
    const MisuseError e = pair_repeat_after_peer(free, true, Rule::ClusterPeerExited);
    EXPECT_EQ(e.where().op, "tcgen05.mma.cta_group::2") << "peer freed its columns: " << free;
  }
}

TEST(MmaRepeatTest, APairMmaAfterThePeerFreedItsColumnsIsOutsideTheAllocation) {
  // The peer stays resident: only its TMEM's epoch tells the repeat that D's columns changed.
  pair_repeat_after_peer(true, false, Rule::TmemOutOfAllocation);
}

TEST(MmaRepeatTest, RepeatsComputeEachKStepsProduct) {
  // Functional: D = sum over two K steps of A_s B_s^T, A_s = 1 + s on the diagonal (k == m % 16),
  // B_s[n][k] = k + n + 10 s: D[m][n] = (m % 16 + n) + 2 (m % 16 + n + 10) = 3 (m % 16 + n) + 20.
  std::vector<std::uint32_t> row(32 * 64);
  run_cta([&](Warp& w) -> Task {
    for (std::uint32_t step = 0; step < 2; ++step) {
      const SmemAddr a{1024 + step * 4096}, b{16384 + step * 2048};
      for (std::uint32_t m = 0; m < 128; ++m)
        for (std::uint32_t k = 0; k < 16; ++k) {
          const std::uint16_t v = float_to_bf16(k == m % 16 ? 1.0f + step : 0.0f);
          w.st_shared(a + core_offset(m, k), std::as_bytes(std::span<const std::uint16_t>(&v, 1)));
        }
      for (std::uint32_t n = 0; n < 64; ++n)
        for (std::uint32_t k = 0; k < 16; ++k) {
          const std::uint16_t v = float_to_bf16(static_cast<float>(k + n + 10 * step));
          w.st_shared(b + core_offset(n, k), std::as_bytes(std::span<const std::uint16_t>(&v, 1)));
        }
    }
    w.fence_proxy_async();
    const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 64);
    w.mbarrier_init(kBar, 1);
    for (std::uint32_t step = 0; step < 2; ++step)
      w.tcgen05_mma(MmaKind::F16, d, desc(1024 + step * 4096), desc(16384 + step * 2048), kIdesc, step > 0);
    w.tcgen05_commit(kBar);
    co_await w.mbarrier_wait(kBar, 0);
    w.tcgen05_ld(d, TmemShape::S32x32b, 64, row);
    co_await w.tcgen05_wait_ld();
    w.tcgen05_dealloc(d, 64);
  }, 32, kSmem);
  for (std::uint32_t m : {0u, 7u, 31u})
    for (std::uint32_t n : {0u, 9u, 63u})
      EXPECT_EQ(std::bit_cast<float>(row[m * 64 + n]), 3.0f * static_cast<float>(m % 16 + n) + 20.0f) << m << " " << n;
}

}  // namespace
}  // namespace bwsim
