// The event core alone: how many events per second the queue and coroutine resumption sustain.
#include <benchmark/benchmark.h>

#include "bwsim/core/Engine.hpp"
#include "bwsim/core/Task.hpp"

namespace bwsim {
namespace {

// A self-rescheduling callback: each event schedules the next one a pseudo-random distance ahead,
// keeping `depth` events in flight, as a busy SM keeps its warps' and units' events in flight.
struct Chain {
  Engine* engine;
  std::uint64_t remaining;
  std::uint64_t x = 1;
};

void step(void* p, std::uint64_t) {
  auto* c = static_cast<Chain*>(p);
  if (c->remaining == 0) return;
  --c->remaining;
  c->x = c->x * 6364136223846793005ull + 1442695040888963407ull;
  c->engine->schedule(c->engine->now() + 1 + (c->x >> 58), &step, c);
}

void BM_EngineCallbacks(benchmark::State& state) {
  const auto depth = static_cast<std::uint64_t>(state.range(0));
  constexpr std::uint64_t kEventsPerChain = 10'000;
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine e;
    std::vector<Chain> chains(depth, Chain{&e, kEventsPerChain});
    for (auto& c : chains) e.schedule(0, &step, &c);
    e.run();
    events += e.events_processed();
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineCallbacks)->Arg(8)->Arg(64)->Arg(512)->Unit(benchmark::kMillisecond);

struct Delay {
  Engine& e;
  Cycle d;
  bool await_ready() const { return false; }
  void await_suspend(std::coroutine_handle<> h) const { e.schedule_resume(e.now() + d, h); }
  void await_resume() const {}
};

Task sleeper(Engine& e, std::uint64_t n, Cycle d) {
  for (std::uint64_t i = 0; i < n; ++i) co_await Delay{e, d};
}

// Warp-program resumption: `warps` coroutines each suspending and resuming 10,000 times.
void BM_EngineCoroutines(benchmark::State& state) {
  const auto warps = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine e;
    std::vector<Task> tasks;
    for (std::uint64_t w = 0; w < warps; ++w) tasks.push_back(sleeper(e, 10'000, 1 + w % 7));
    for (auto& t : tasks) e.schedule_resume(0, t.handle());
    e.run();
    events += e.events_processed();
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineCoroutines)->Arg(6)->Arg(96)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bwsim
