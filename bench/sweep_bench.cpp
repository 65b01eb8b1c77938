// bwsim sweep over 8 points (the persistent GEMM at 4096^3: stages 2/3/4/6 x tile N 128/256) on
// 1 and 2 threads: the parallel sweep's speed-up (issue: -j 2 at least 1.8x -j 1 on two cores).
#include <benchmark/benchmark.h>

#include "bwsim/cli/Sweep.hpp"

namespace bwsim {
namespace {

void BM_Sweep8Points(benchmark::State& state) {
  const KernelInfo& k = *find_kernel("gemm_persistent");
  RunFlags f;
  f.config = BWSIM_SOURCE_DIR "/sim_configs/b200.yaml";
  for (const KernelParam& p : k.params) f.params[k.name][p.name] = p.default_value;
  for (const char* d : {"m", "n", "k"}) f.params[k.name][d] = "4096";
  f.sweep_params = {"stages=2,3,4,6", "tile-n=128,256"};
  const SweepOptions s{.jobs = static_cast<std::uint32_t>(state.range(0))};
  for (auto _ : state) benchmark::DoNotOptimize(run_sweep(k, f, s).rows.size());
}
BENCHMARK(BM_Sweep8Points)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace bwsim
