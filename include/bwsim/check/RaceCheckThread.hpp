#pragma once
// The race checker on the host's second core. The simulation posts each race-checking step (a
// record, a check, a happens-before update) as a small command into a single-producer,
// single-consumer ring, in the order it would have run it; this thread runs them in that order on
// the checker's own state (the records, the vector clocks), which the simulation no longer touches.
// The simulation never waits for an answer, so the two overlap.
//
// The thread does not report races itself. A command that finds one (any exception) marks the
// thread failed and the rest are skipped; the launch then throws RaceCheckDeferred and the caller
// runs the kernel again with the checks inline, which raises the same error, located as always.
// The inline run is the reference: both run the same commands on the same state (the simulation's
// own steps do not depend on the checks' answers; a command that absorbed others, post_or_absorb,
// finds what they would have and records what later checks would find in theirs), so the thread
// fails wherever the inline checks throw.
// It may also fail where they would not (a stale-parity check of a wait whose barrier is
// re-initialised before the warp gets to it), which costs the rerun and changes nothing else.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

namespace bwsim {

// Thrown by a launch whose race-checking thread found a race: run it again with checks inline.
struct RaceCheckDeferred : std::exception {
  const char* what() const noexcept override { return "the race-checking thread found a race: run again with inline checks"; }
};

// Thrown on the race-checking thread where an inline check raises a located error (Cta::fail):
// the location and message are those of the inline run.
struct RaceFoundOnThread : std::exception {};

class RaceCheckThread {
 public:
  RaceCheckThread();
  ~RaceCheckThread();
  RaceCheckThread(const RaceCheckThread&) = delete;
  RaceCheckThread& operator=(const RaceCheckThread&) = delete;

  // Runs `f()` on the thread, after every command posted before. `f` is copied into the ring: a
  // lambda capturing pointers and numbers by value. Never throws (some steps are posted inside a
  // coroutine's final suspend); a run learns of a failure from failed().
  template <class F>
  void post(F f) {
    static_assert(std::is_trivially_copyable_v<F> && sizeof(F) <= kPayloadBytes && alignof(F) <= kPayloadAlign,
                  "a race-check command captures pointers and numbers only, in at most a slot's payload");
    if (head_ - tail_seen_ == kSlots) wait_for_room();
    Slot& s = ring_[head_ & (kSlots - 1)];
    s.run = &run_as<F>;
    ::new (static_cast<void*>(s.payload)) F(f);
    if ((++head_ & (kPublishEvery - 1)) == 0) publish();
  }
  // Posts `f`, unless the command posted last is an F the thread has not been shown yet and
  // `last.absorb(f)` takes it in (then that one command stands for both).
  template <class F>
  void post_or_absorb(const F& f) {
    if (head_ > published_here_) {
      Slot& last = ring_[(head_ - 1) & (kSlots - 1)];
      if (last.run == &run_as<F> && std::launder(reinterpret_cast<F*>(last.payload))->absorb(f)) return;
    }
    post(f);
  }
  // The thread is shown the commands every this many posts (and at drain()).
  static constexpr std::uint64_t kPublishEvery = 64;
  // Commands posted so far, and whether the thread has run (or skipped) the first `n` of them.
  std::uint64_t posted() const { return head_; }
  bool done_up_to(std::uint64_t n) const { return tail_.load(std::memory_order_acquire) >= n; }
  // Waits until the thread has run (or skipped) every command posted; then whether one failed.
  bool drain();
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Whether the calling thread is a race-checking thread (Cta::fail throws RaceFoundOnThread there).
  static bool on_checker_thread();

 private:
  static constexpr std::size_t kSlots = 4096;        // 256 KiB of commands in flight
  static constexpr std::size_t kPayloadBytes = 56, kPayloadAlign = 8;
  struct alignas(64) Slot {
    void (*run)(const void*);
    alignas(kPayloadAlign) unsigned char payload[kPayloadBytes];
  };
  template <class F>
  static void run_as(const void* p) {
    (*static_cast<const F*>(p))();
  }
  void publish();
  void wait_for_room();
  void consume();

  std::vector<Slot> ring_;
  // The producer's line: its head and its last view of the tail.
  alignas(64) std::uint64_t head_ = 0;
  std::uint64_t tail_seen_ = 0;
  std::uint64_t published_here_ = 0;  // the head last published: the commands from it on are the producer's
  // Shared, each on its own line.
  alignas(64) std::atomic<std::uint64_t> published_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  alignas(64) std::atomic<bool> sleeping_{false};
  std::atomic<std::uint32_t> wake_{0};  // what a sleeping consumer waits on
  std::atomic<bool> failed_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace bwsim
