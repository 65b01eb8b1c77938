#pragma once
// The discrete-event core: one queue ordered by (cycle, insertion sequence), so runs are
// deterministic. An event is a plain function pointer plus two words: no heap allocation
// and no virtual call per event.
#include <coroutine>
#include <cstdint>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

using EventFn = void (*)(void* object, std::uint64_t arg);

class Engine {
 public:
  Engine() { heap_.reserve(1024); }

  Cycle now() const { return now_; }
  std::uint64_t events_processed() const { return processed_; }
  bool idle() const { return heap_.empty(); }

  // Schedules fn(object, arg) at cycle `when` (never earlier than now()).
  void schedule(Cycle when, EventFn fn, void* object, std::uint64_t arg = 0);
  void schedule_resume(Cycle when, std::coroutine_handle<> handle);

  // Runs events until the queue is empty or the next event lies beyond `limit`.
  // Returns true if the queue drained, false if it stopped at the limit.
  bool run(Cycle limit = kNever);

  // From now on, events of one cycle run in an order drawn from `seed` (schedule perturbation)
  // rather than in the order they were scheduled.
  void shuffle_ties(std::uint64_t seed) {
    shuffle_ = true;
    rng_ = seed;
  }

  // Calls fn(context) every 2^18 events while running (progress display); nullptr: never.
  using ProgressFn = void (*)(void* context);
  void set_progress(ProgressFn fn, void* context) {
    progress_ = fn;
    progress_context_ = context;
  }
  static constexpr std::uint64_t kProgressMask = (1u << 18) - 1;

 private:
  struct Event {
    Cycle when;
    std::uint64_t seq;
    EventFn fn;
    void* object;
    std::uint64_t arg;
  };
  void push(const Event& e);
  Event pop();

  std::vector<Event> heap_;  // binary min-heap on (when, seq)
  Cycle now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
  ProgressFn progress_ = nullptr;
  void* progress_context_ = nullptr;
  bool shuffle_ = false;
  std::uint64_t rng_ = 0;
};

}  // namespace bwsim
