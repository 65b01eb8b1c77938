#include "bwsim/check/RaceCheckThread.hpp"

#include <immintrin.h>

namespace bwsim {
namespace {
thread_local bool checker_thread = false;
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
  published_.store(head_, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) {
    wake_.fetch_add(1, std::memory_order_seq_cst);
    wake_.notify_one();
  }
}

void RaceCheckThread::wait_for_room() {
  publish();
  while ((tail_seen_ = tail_.load(std::memory_order_acquire)) + kSlots == head_) _mm_pause();
}

bool RaceCheckThread::drain() {
  publish();
  while (tail_.load(std::memory_order_acquire) < head_) _mm_pause();
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
      for (int i = 0; i < 2048 && published_.load(std::memory_order_acquire) == head; ++i) _mm_pause();
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
