#pragma once
// The counters every simulated-kernel benchmark reports: events per wall second and per kernel.
#include <benchmark/benchmark.h>

#include <cstdint>

namespace bwsim {

inline void report_kernel_events(benchmark::State& state, std::uint64_t events) {
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events/kernel"] = static_cast<double>(events) / static_cast<double>(state.iterations());
}

}  // namespace bwsim
