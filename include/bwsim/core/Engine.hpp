#pragma once
// The discrete-event core: events run in (cycle, insertion sequence) order, so runs are
// deterministic. An event is a plain function pointer plus two words: no heap allocation
// and no virtual call per event.
//
// The queue is a calendar: a ring of kWindow one-cycle buckets covers [now, now + kWindow), each a
// FIFO list of pooled nodes (a bucket's events were scheduled in sequence order), with a bitmap of
// the non-empty ones; events further ahead wait in a binary heap on (cycle, sequence). The next
// event is the earlier of the first non-empty bucket's head and the heap's top, so the order is
// exactly the single heap's, at O(1) per event instead of O(log depth) (a full-chip run keeps
// thousands of events pending). Perturbed runs (shuffle_ties) draw their sequence numbers, so
// their events all go to the heap.
#include <coroutine>
#include <cstdint>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

using EventFn = void (*)(void* object, std::uint64_t arg);

class Engine {
 public:
  Engine();

  Cycle now() const { return now_; }
  std::uint64_t events_processed() const { return processed_; }
  bool idle() const { return bucketed_ == 0 && heap_.empty(); }

  // Schedules fn(object, arg) at cycle `when` (never earlier than now()). Inline: most events go to
  // a bucket, a few dozen instructions that a call would nearly double.
  void schedule(Cycle when, EventFn fn, void* object, std::uint64_t arg = 0) {
    if (when - now_ < kWindow && !shuffle_) [[likely]] {
      push_bucket(Event{when, seq_++, fn, object, arg});
      return;
    }
    schedule_general(when, fn, object, arg);
  }
  void schedule_resume(Cycle when, std::coroutine_handle<> handle);
  // The sequence number an event scheduled now would get, taken without scheduling it; a caller
  // that schedules that event later (schedule_as) gives it the place it would have had among the
  // events of its cycle, as if it had been scheduled now.
  std::uint64_t take_seq() { return shuffle_ ? drawn_seq() : seq_++; }
  void schedule_as(std::uint64_t seq, Cycle when, EventFn fn, void* object, std::uint64_t arg = 0);
  // The sequence number of the event running now.
  std::uint64_t running_seq() const { return running_seq_; }

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
  static constexpr std::uint32_t kWindow = 1u << 13;  // cycles covered by buckets (a power of two)
  static constexpr std::uint32_t kNil = ~0u;
  struct Node {
    Event event;
    std::uint32_t next;  // the bucket's next node, or the free list's
  };
  std::uint64_t drawn_seq();  // a perturbed run's: a drawn high part orders the events of one cycle
  // schedule()'s other cases: beyond the window, earlier than now (clamped), or a perturbed run.
  void schedule_general(Cycle when, EventFn fn, void* object, std::uint64_t arg);
  void push_heap(const Event& e);
  Event pop_heap();
  void push_bucket(const Event& e) {
    std::uint32_t n = free_;
    if (n != kNil) [[likely]] {
      free_ = nodes_[n].next;
      nodes_[n] = Node{e, kNil};
    } else {
      n = new_node(e);
    }
    const std::uint32_t b = static_cast<std::uint32_t>(e.when) & (kWindow - 1);
    if (head_[b] == kNil) {
      head_[b] = n;
      occupied_[b / 64] |= 1ull << (b % 64);
    } else {
      nodes_[tail_[b]].next = n;
    }
    tail_[b] = n;
    ++bucketed_;
  }
  std::uint32_t new_node(const Event& e);  // a node beyond the pool's, holding e
  Event pop_bucket(std::uint32_t b);  // the head of non-empty bucket b
  // The first non-empty bucket at or after now's (there is one: bucketed_ > 0).
  std::uint32_t first_bucket() const;

  std::vector<Event> heap_;  // binary min-heap on (when, seq): events beyond the window, and perturbed runs'
  std::vector<Node> nodes_;  // the buckets' nodes, recycled through free_
  std::uint32_t free_ = kNil;
  std::vector<std::uint32_t> head_, tail_;       // per bucket: its oldest and newest node, or kNil
  std::vector<std::uint64_t> occupied_;          // bit per bucket: non-empty
  std::uint64_t bucketed_ = 0;                   // events in buckets
  Cycle now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
  std::uint64_t running_seq_ = 0;
  ProgressFn progress_ = nullptr;
  void* progress_context_ = nullptr;
  bool shuffle_ = false;
  std::uint64_t rng_ = 0;
};

}  // namespace bwsim
