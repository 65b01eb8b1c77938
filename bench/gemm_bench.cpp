// gemm in timing mode on the B200 config: wall time per simulated kernel and events per second.
#include <benchmark/benchmark.h>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/kernels/Gemm.hpp"
#include "bwsim/kernels/GemmSm90.hpp"
#include "KernelCounters.hpp"

namespace bwsim {
namespace {

void run(benchmark::State& state, const GemmParams& p) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  std::uint64_t events = 0;
  for (auto _ : state) events += run_gemm(cfg, SimOptions{.mode = Mode::Timing}, p, false).run.events;
  report_kernel_events(state, events);
}

void BM_GemmTiming(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  run(state, {.m = n, .n = n, .k = n, .ctas = static_cast<std::uint32_t>(state.range(1))});
}
// 2048^3 on one CTA (the figure) and 8192^3 on all 148 SMs (the main job).
BENCHMARK(BM_GemmTiming)->Args({2048, 1})->Args({8192, 148})->Unit(benchmark::kMillisecond);

// 8192^3 on 144 SMs in clusters: args cluster M, cluster N, CTA pairs (0/1).
void BM_GemmClusterTiming(benchmark::State& state) {
  run(state, {.m = 8192, .n = 8192, .k = 8192, .ctas = 144,
              .cluster_m = static_cast<std::uint32_t>(state.range(0)),
              .cluster_n = static_cast<std::uint32_t>(state.range(1)), .two_sm = state.range(2) != 0});
}
BENCHMARK(BM_GemmClusterTiming)->Args({1, 1, 0})->Args({2, 2, 0})->Args({2, 1, 1})->Args({4, 2, 1})
    ->Unit(benchmark::kMillisecond);

// The persistent GEMM on the whole chip (74 CTA pairs in 2x1 clusters, or 148 CTAs), with the race
// checker off, inline (the library's default) or on its own thread (bwsim run's on a host of two
// cores): args M = N = K, 2-SM (0/1), race checks (0 off, 1 inline, 2 thread). 8192^3 2-SM with
// checks is the main job; 16384^3 is issue 21's long run.
void BM_GemmPersistentTiming(benchmark::State& state) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const bool two_sm = state.range(1) != 0;
  const GemmParams p{.m = n, .n = n, .k = n, .ctas = 148, .cluster_m = two_sm ? 2u : 1u, .two_sm = two_sm};
  std::uint64_t events = 0;
  const SimOptions options{.mode = Mode::Timing, .check_races = state.range(2) != 0, .race_check_thread = state.range(2) == 2};
  for (auto _ : state) events += run_gemm(cfg, options, p, false).run.events;
  report_kernel_events(state, events);
}
BENCHMARK(BM_GemmPersistentTiming)->Args({8192, 1, 1})->Args({8192, 1, 2})->Args({8192, 1, 0})->Args({8192, 0, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmPersistentTiming)->Args({16384, 1, 1})->Args({16384, 1, 2})->Unit(benchmark::kMillisecond)->Iterations(1);

// A functional 1024^3 GEMM on 148 CTAs (real bytes, real products) with its fp64 reference check
// (check_gemm) or without: the check's cost is the difference.
void BM_GemmFunctional(benchmark::State& state) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  const GemmParams p{.m = 1024, .n = 1024, .k = 1024, .ctas = 148};
  for (auto _ : state) benchmark::DoNotOptimize(run_gemm(cfg, SimOptions{.mode = Mode::Functional}, p, state.range(0) != 0));
}
BENCHMARK(BM_GemmFunctional)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The Hopper validation's GEMM (gemm_sm90 on the H100 config, race checks on) at 4096^3, a row of
// its table and of the sustained-power tests: args schedule (0 cooperative 128x256, 1 ping-pong
// 128x128 with 6 stages).
void BM_GemmSm90Timing(benchmark::State& state) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  GemmSm90Params p{.m = 4096, .n = 4096, .k = 4096};
  if (state.range(0) == 1) {
    p.schedule = Sm90Schedule::Pingpong;
    p.rows_per_wg = 128;
    p.tile_n = 128;
    p.stages = 6;
  }
  std::uint64_t events = 0;
  for (auto _ : state) events += run_gemm_sm90(cfg, SimOptions{.mode = Mode::Timing}, p, false).run.events;
  report_kernel_events(state, events);
}
BENCHMARK(BM_GemmSm90Timing)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bwsim
