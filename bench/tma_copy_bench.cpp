// tma_copy in timing mode on the B200 config: wall time per simulated kernel and events per second.
#include <benchmark/benchmark.h>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/kernels/TmaCopy.hpp"
#include "KernelCounters.hpp"

namespace bwsim {
namespace {

void BM_TmaCopyTiming(benchmark::State& state) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const auto ctas = static_cast<std::uint32_t>(state.range(1));
  const TmaCopyParams p{.rows = n, .cols = n, .dtype = DataType::BF16, .box_rows = 64, .box_cols = 64,
                        .stages = 4, .swizzle = Swizzle::B128, .consumers = 1, .ctas = ctas};
  std::uint64_t events = 0;
  Cycle cycles = 0;
  for (auto _ : state) {
    const TmaCopyResult r = run_tma_copy(cfg, SimOptions{.mode = Mode::Timing}, p, false);
    events += r.run.events;
    cycles = r.run.cycles;
  }
  report_kernel_events(state, events);
  state.counters["sim_cycles"] = static_cast<double>(cycles);
}
// 1024^2 on one CTA (the CLI default) and 8192^2 bf16 (128 MiB moved) across all 148 SMs.
BENCHMARK(BM_TmaCopyTiming)->Args({1024, 1})->Args({8192, 148})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bwsim
