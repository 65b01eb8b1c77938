#include "bwsim/core/Engine.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "bwsim/core/Task.hpp"

namespace bwsim {
namespace {

struct Log {
  Engine* engine;
  std::vector<std::pair<Cycle, std::uint64_t>> seen;
};

void record(void* p, std::uint64_t arg) {
  auto* log = static_cast<Log*>(p);
  log->seen.emplace_back(log->engine->now(), arg);
}

TEST(EngineTest, RunsEventsInCycleOrderThenInsertionOrder) {
  Engine e;
  Log log{&e, {}};
  e.schedule(30, &record, &log, 1);
  e.schedule(10, &record, &log, 2);
  e.schedule(30, &record, &log, 3);
  e.schedule(10, &record, &log, 4);
  e.schedule(20, &record, &log, 5);
  EXPECT_TRUE(e.run());
  const std::vector<std::pair<Cycle, std::uint64_t>> want{{10, 2}, {10, 4}, {20, 5}, {30, 1}, {30, 3}};
  EXPECT_EQ(log.seen, want);
  EXPECT_EQ(e.events_processed(), 5u);
  EXPECT_EQ(e.now(), 30u);
}

TEST(EngineTest, StopsAtTheLimitAndKeepsLaterEvents) {
  Engine e;
  Log log{&e, {}};
  e.schedule(5, &record, &log, 1);
  e.schedule(50, &record, &log, 2);
  EXPECT_FALSE(e.run(40));
  EXPECT_EQ(log.seen.size(), 1u);
  EXPECT_FALSE(e.idle());
  EXPECT_TRUE(e.run());
  EXPECT_EQ(log.seen.back(), (std::pair<Cycle, std::uint64_t>{50, 2}));
}

// An event scheduled far ahead (beyond the calendar's window of buckets) keeps its place before one
// scheduled later for the same cycle from near it: insertion order holds across the two structures.
void record_then_schedule_at_100000(void* p, std::uint64_t arg) {
  record(p, arg);
  auto* log = static_cast<Log*>(p);
  log->engine->schedule(100000, &record, log, arg + 1);
}

TEST(EngineTest, AnEventFarAheadRunsBeforeOneScheduledLaterForTheSameCycle) {
  Engine e;
  Log log{&e, {}};
  e.schedule(100000, &record, &log, 1);
  e.schedule(99990, &record_then_schedule_at_100000, &log, 2);
  e.schedule(250000, &record, &log, 9);
  EXPECT_FALSE(e.run(200000));
  const std::vector<std::pair<Cycle, std::uint64_t>> want{{99990, 2}, {100000, 1}, {100000, 3}};
  EXPECT_EQ(log.seen, want);
  EXPECT_TRUE(e.run());
  EXPECT_EQ(log.seen.back(), (std::pair<Cycle, std::uint64_t>{250000, 9}));
  EXPECT_TRUE(e.idle());
}

TEST(EngineTest, LargeRandomScheduleIsDeterministicAndOrdered) {
  auto run_once = [] {
    Engine e;
    Log log{&e, {}};
    std::uint64_t x = 7;
    for (int i = 0; i < 5000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      e.schedule((x >> 33) % 50000, &record, &log, static_cast<std::uint64_t>(i));
    }
    e.run();
    return log.seen;
  };
  const auto a = run_once();
  EXPECT_EQ(a, run_once());
  for (std::size_t i = 1; i < a.size(); ++i) {
    ASSERT_LE(a[i - 1].first, a[i].first);
    if (a[i - 1].first == a[i].first) {
      ASSERT_LT(a[i - 1].second, a[i].second);
    }
  }
}

Task child(Engine& e, std::vector<Cycle>& trace) {
  trace.push_back(e.now());
  co_return;
}

struct Sleep {
  Engine& e;
  Cycle d;
  bool await_ready() const { return false; }
  void await_suspend(std::coroutine_handle<> h) const { e.schedule_resume(e.now() + d, h); }
  void await_resume() const {}
};

Task parent(Engine& e, std::vector<Cycle>& trace) {
  co_await Sleep{e, 7};
  co_await child(e, trace);
  co_await Sleep{e, 5};
  trace.push_back(e.now());
}

TEST(TaskTest, CoroutineSuspendsOnEventsAndNestsTasks) {
  Engine e;
  std::vector<Cycle> trace;
  bool done = false;
  Task t = parent(e, trace);
  t.set_on_done([](void* d) { *static_cast<bool*>(d) = true; }, &done);
  e.schedule_resume(0, t.handle());
  e.run();
  EXPECT_TRUE(done);
  EXPECT_EQ(trace, (std::vector<Cycle>{7, 12}));
}

Task thrower(Engine& e) {
  co_await Sleep{e, 1};
  throw std::runtime_error("boom");
}

TEST(TaskTest, ExceptionInAWarpProgramEndsTheRun) {
  Engine e;
  Task t = thrower(e);
  e.schedule_resume(0, t.handle());
  EXPECT_THROW(e.run(), std::runtime_error);
}

}  // namespace
}  // namespace bwsim
