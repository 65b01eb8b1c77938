#include "bwsim/check/RaceCheckThread.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace bwsim {
namespace {
thread_local bool checker_thread = false;

// One step of a wait for the other thread: a spin-wait hint, and after many a yield of the core
// (on a host with fewer free cores than threads the other one may not be running).
void wait_step(std::uint32_t& steps) {
#if defined(__x86_64__) || defined(__i386__)
  if (++steps < 4096) return _mm_pause();
#else
  ++steps;
#endif
  std::this_thread::yield();
}
}  // namespace

bool RaceCheckThread::on_checker_thread() { return checker_thread; }

RaceCheckThread::RaceCheckThread() : ring_(kSlots), thread_([this] { consume(); }) {}

RaceCheckThread::~RaceCheckThread() {
  publish();
  stop_.store(true, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  wake_.notify_one();
  thread_.join();
}

void RaceCheckThread::publish() {
  published_here_ = head_;
  published_.store(head_, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) {
    wake_.fetch_add(1, std::memory_order_seq_cst);
    wake_.notify_one();
  }
}

void RaceCheckThread::wait_for_room() {
  publish();
  for (std::uint32_t steps = 0; (tail_seen_ = tail_.load(std::memory_order_acquire)) + kSlots == head_;) wait_step(steps);
}

bool RaceCheckThread::drain() {
  publish();
  for (std::uint32_t steps = 0; tail_.load(std::memory_order_acquire) < head_;) wait_step(steps);
  return failed();
}

void RaceCheckThread::consume() {
  checker_thread = true;
  std::uint64_t tail = 0;
  for (;;) {
    const std::uint64_t head = published_.load(std::memory_order_acquire);
    if (tail == head) {
      // The destructor published everything before it asked to stop.
      if (stop_.load(std::memory_order_seq_cst) && published_.load(std::memory_order_seq_cst) == head) return;
      // Idle: spin briefly (the next batch usually follows soon), then sleep until published.
      for (std::uint32_t steps = 0; steps < 2048 && published_.load(std::memory_order_acquire) == head;) wait_step(steps);
      if (published_.load(std::memory_order_acquire) != head) continue;
      const std::uint32_t w = wake_.load(std::memory_order_seq_cst);
      sleeping_.store(true, std::memory_order_seq_cst);
      if (published_.load(std::memory_order_seq_cst) == head && !stop_.load(std::memory_order_seq_cst))
        wake_.wait(w, std::memory_order_seq_cst);
      sleeping_.store(false, std::memory_order_seq_cst);
      continue;
    }
    for (; tail < head; ++tail) {
      Slot& s = ring_[tail & (kSlots - 1)];
      if (!failed_.load(std::memory_order_relaxed)) {
        try {
          s.run(s.payload);
        } catch (...) {
          failed_.store(true, std::memory_order_release);
        }
      }
      if (((tail + 1) & (kPublishEvery - 1)) == 0) tail_.store(tail + 1, std::memory_order_release);
    }
    tail_.store(tail, std::memory_order_release);
  }
}

}  // namespace bwsim
