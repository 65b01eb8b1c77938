// The register pool on unit_test.yaml (64 K registers per SM): setmaxnreg as the FMHA kernel uses
// it, and its misuse, deadlock and launch errors.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

RunResult run_512(const WarpProgram& p, std::uint32_t registers = 0) {
  Simulator sim(test::unit_config(), SimOptions{});
  return sim.launch("regs", LaunchConfig{.grid_ctas = 1, .block_threads = 512, .registers_per_thread = registers}, p);
}

TEST(SetmaxnregTest, IncBlocksUntilOtherWarpgroupsGiveRegistersBack) {
  // 512 threads start with 128 registers each: the whole pool. Warpgroups 0 and 1 grow to 192
  // (FMHA's softmax), 2 shrinks to 96 and 3 to 32 at cycle 100: exactly the 2 x 64 x 128 the
  // growers need, so they resume one issue slot after the last dec.
  std::vector<std::uint32_t> regs(16);
  Cycle grown_at = 0;
  run_512([&](Warp& w) -> Task {
    const std::uint32_t wg = w.warpgroup_idx();
    if (wg < 2) {
      EXPECT_EQ(w.registers(), 128u);
      co_await w.setmaxnreg_inc(192);
      grown_at = std::max(grown_at, w.now());
    } else {
      co_await w.sleep(100);
      w.setmaxnreg_dec(wg == 2 ? 96 : 32);
    }
    regs[w.warp_idx()] = w.registers();
  });
  EXPECT_EQ(grown_at, 101u);
  for (std::uint32_t i = 0; i < 16; ++i) EXPECT_EQ(regs[i], i < 8 ? 192u : i < 12 ? 96u : 32u) << "warp " << i;
}

TEST(SetmaxnregTest, MisuseIsLocated) {
  EXPECT_SIM_MISUSE(run_512([](Warp& w) -> Task { w.setmaxnreg_dec(20); co_return; }), Rule::SetmaxnregMisuse);
  EXPECT_SIM_MISUSE(run_512([](Warp& w) -> Task { w.setmaxnreg_dec(100); co_return; }), Rule::SetmaxnregMisuse);
  EXPECT_SIM_MISUSE(run_512([](Warp& w) -> Task { co_await w.setmaxnreg_inc(96); }), Rule::SetmaxnregMisuse);  // < 128
  // Warps 0-1 and 2-3 of warpgroup 0 disagree.
  EXPECT_SIM_MISUSE(run_512([](Warp& w) -> Task {
                      if (w.warpgroup_idx() == 0) w.setmaxnreg_dec(w.warp_idx() < 2 ? 96 : 88);
                      co_return;
                    }),
                    Rule::SetmaxnregMisuse);
}

TEST(SetmaxnregTest, APoolThatNeverSufficesDeadlocksWithAReport) {
  try {
    run_512([](Warp& w) -> Task {
      if (w.warpgroup_idx() == 0) co_await w.setmaxnreg_inc(256);
    });
    FAIL() << "no deadlock";
  } catch (const DeadlockError& e) {
    EXPECT_NE(std::string(e.what()).find("blocked in setmaxnreg.inc to 256 registers per thread (has 128)"),
              std::string::npos)
        << e.what();
  }
}

TEST(SetmaxnregTest, LaunchRegistersMustFitThePool) {
  EXPECT_THROW(run_512([](Warp&) -> Task { co_return; }, 136), InputError);  // 136 x 512 > 64 K
  EXPECT_THROW(run_512([](Warp&) -> Task { co_return; }, 100), InputError);  // not a multiple of 8
}

}  // namespace
}  // namespace bwsim
