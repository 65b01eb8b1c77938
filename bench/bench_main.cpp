// Google Benchmark's main, after the bwsim executable's own start-up step: the heap on transparent
// huge pages (cli/HugePageHeap), so that the benchmarks time the simulator as `bwsim` runs it.
#include <benchmark/benchmark.h>

#include "bwsim/cli/HugePageHeap.hpp"

int main(int argc, char** argv) {
  bwsim::reexec_with_huge_page_heap(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
