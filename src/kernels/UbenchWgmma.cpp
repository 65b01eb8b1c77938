// The wgmma microbenchmarks of tools/calibration/h100_wgmma.cu as bwsim programs: one CTA, one or
// two consumer warpgroups, operands in 128B-swizzled K-major SMEM tiles, warpgroup 0's warp 0
// timing the loop after 8 discarded iterations.
#include <vector>

#include "bwsim/kernels/Ubench.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kIters = 1000, kWarmup = 8;
constexpr std::uint32_t kChain = 32;  // wgmmas per iteration in the throughput loops
constexpr std::uint32_t kA = 0, kB = 64 * 128, kSmem = kB + 256 * 128;

WgmmaShape shape_of(DataType t, std::uint32_t n) { return WgmmaShape{.a_type = t, .b_type = t, .n = n}; }

// Cycles per iteration of `per_iter` wgmmas + commit + wait_group 0 (after a fence) by `groups`
// warpgroups at once, as warpgroup 0's warp 0 sees them.
double loop(const HardwareConfig& c, DataType t, std::uint32_t n, bool rs, std::uint32_t groups, std::uint32_t per_iter) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  Cycle t0 = 0, t1 = 0;
  const WgmmaShape shape = shape_of(t, n);
  const std::vector<std::uint32_t> a_regs(32 * kWgmmaARegisters, 0);
  sim.launch("ubench", LaunchConfig{.grid_ctas = 1, .block_threads = 128 * groups, .dynamic_smem_bytes = kSmem},
             [&](Warp& w) -> Task {
               WgmmaAccumulator acc(w, n);
               co_await w.syncthreads();
               for (std::uint32_t i = 0; i < kIters + kWarmup; ++i) {
                 if (i == kWarmup && w.warp_idx() == 0) t0 = w.now();
                 w.wgmma_fence();
                 for (std::uint32_t j = 0; j < per_iter; ++j) {
                   if (rs) w.wgmma(acc, a_regs, k_major_swizzle128_descriptor(kB), shape, j > 0);
                   else w.wgmma(acc, k_major_swizzle128_descriptor(kA), k_major_swizzle128_descriptor(kB), shape, j > 0);
                 }
                 w.wgmma_commit_group();
                 co_await w.wgmma_wait_group(0);
               }
               if (w.warp_idx() == 0) t1 = w.now();
             });
  return static_cast<double>(t1 - t0) / kIters;
}

UbenchScenario latency(const char* name, DataType t, bool rs) {
  return {name, UbenchParam::WgmmaN, [t, rs](const HardwareConfig& c, std::uint32_t n) {
            return static_cast<std::int64_t>(loop(c, t, n, rs, 1, 1));
          }};
}

// 100 x cycles per wgmma over both warpgroups' instructions.
UbenchScenario throughput(const char* name, DataType t, bool rs, std::uint32_t groups) {
  return {name, UbenchParam::WgmmaN, [t, rs, groups](const HardwareConfig& c, std::uint32_t n) {
            return static_cast<std::int64_t>(100.0 * loop(c, t, n, rs, groups, kChain) / (kChain * groups) + 0.5);
          }};
}

}  // namespace

std::vector<UbenchScenario> wgmma_scenarios() {
  return {latency("wgmma_latency_ss_bf16", DataType::BF16, false),
          latency("wgmma_latency_rs_bf16", DataType::BF16, true),
          latency("wgmma_latency_ss_e4m3", DataType::E4M3, false),
          throughput("wgmma_throughput_ss_bf16_1wg_x100", DataType::BF16, false, 1),
          throughput("wgmma_throughput_rs_bf16_1wg_x100", DataType::BF16, true, 1),
          throughput("wgmma_throughput_ss_e4m3_1wg_x100", DataType::E4M3, false, 1),
          throughput("wgmma_throughput_ss_bf16_2wg_x100", DataType::BF16, false, 2),
          throughput("wgmma_throughput_rs_bf16_2wg_x100", DataType::BF16, true, 2),
          throughput("wgmma_throughput_ss_e4m3_2wg_x100", DataType::E4M3, false, 2)};
}

}  // namespace bwsim
