// gemm in timing mode on the B200 config: wall time per simulated kernel and events per second.
#include <benchmark/benchmark.h>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/kernels/Gemm.hpp"

namespace bwsim {
namespace {

void BM_GemmTiming(benchmark::State& state) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const GemmParams p{.m = n, .n = n, .k = n, .ctas = static_cast<std::uint32_t>(state.range(1))};
  std::uint64_t events = 0;
  for (auto _ : state) events += run_gemm(cfg, SimOptions{.mode = Mode::Timing}, p, false).run.events;
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events/kernel"] = static_cast<double>(events) / static_cast<double>(state.iterations());
}
// 2048^3 on one CTA (the figure) and 8192^3 on all 148 SMs (the main job).
BENCHMARK(BM_GemmTiming)->Args({2048, 1})->Args({8192, 148})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bwsim
