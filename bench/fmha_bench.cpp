// fmha in timing mode on the B200 config (8 sequences x 16 heads x 2048 tokens, head dim 128: a
// row of issue 19's prediction table): wall time per simulated kernel and events per second, for
// the CUTLASS algorithm and FlashAttention-4's (arg: 0 cutlass, 1 fa4; causal 0/1).
#include <benchmark/benchmark.h>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/kernels/Fmha.hpp"
#include "KernelCounters.hpp"

namespace bwsim {
namespace {

void BM_FmhaTiming(benchmark::State& state) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  const bool causal = state.range(1) != 0;
  FmhaParams p{.batch = 8, .heads = 16, .seqlen = 2048, .causal = causal};
  if (state.range(0) != 0) p.algorithm = FmhaAlgorithm::fa4(p.headdim, causal);
  std::uint64_t events = 0;
  for (auto _ : state) events += run_fmha(cfg, SimOptions{.mode = Mode::Timing}, p, false).run.events;
  report_kernel_events(state, events);
}
BENCHMARK(BM_FmhaTiming)->Args({0, 0})->Args({1, 0})->Args({0, 1})->Args({1, 1})->Unit(benchmark::kMillisecond);

// Long-sequence attention (issue 21's figure): 1 sequence x 16 heads x 16384 tokens, head dim 128,
// the CUTLASS algorithm, race checking inline (the library's default) or on its own thread (bwsim
// run's on a host of two cores): args seqlen, thread (0/1).
void BM_FmhaLongTiming(benchmark::State& state) {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  const FmhaParams p{.batch = 1, .heads = 16, .seqlen = static_cast<std::uint32_t>(state.range(0))};
  const SimOptions options{.mode = Mode::Timing, .race_check_thread = state.range(1) != 0};
  std::uint64_t events = 0;
  for (auto _ : state) events += run_fmha(cfg, options, p, false).run.events;
  report_kernel_events(state, events);
}
BENCHMARK(BM_FmhaLongTiming)->Args({16384, 0})->Args({16384, 1})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace bwsim
