#include "bwsim/core/Engine.hpp"

#include <cassert>

#include "bwsim/core/Bits.hpp"

namespace bwsim {
namespace {
// Lexicographic (when, seq): equal cycles run in insertion order.
inline bool before(std::uint64_t aw, std::uint64_t as, std::uint64_t bw, std::uint64_t bs) {
  return aw < bw || (aw == bw && as < bs);
}
void resume_coroutine(void* address, std::uint64_t) {
  std::coroutine_handle<>::from_address(address).resume();
}
}  // namespace

void Engine::schedule(Cycle when, EventFn fn, void* object, std::uint64_t arg) {
  assert(when >= now_);
  std::uint64_t seq = seq_++;
  if (shuffle_)  // a drawn high part orders the events of one cycle; the low part keeps keys unique
    seq = (splitmix64(rng_) << 40) | (seq & ((1ull << 40) - 1));
  push(Event{when < now_ ? now_ : when, seq, fn, object, arg});
}

void Engine::schedule_resume(Cycle when, std::coroutine_handle<> handle) {
  schedule(when, &resume_coroutine, handle.address());
}

void Engine::push(const Event& e) {
  // Hand-rolled sift-up: std::push_heap would need a comparator object per call site.
  heap_.push_back(e);
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    std::size_t parent = (i - 1) / 2;
    if (!before(e.when, e.seq, heap_[parent].when, heap_[parent].seq)) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Engine::Event Engine::pop() {
  Event top = heap_.front();
  Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1].when, heap_[child + 1].seq, heap_[child].when, heap_[child].seq))
      ++child;
    if (!before(heap_[child].when, heap_[child].seq, last.when, last.seq)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = last;
  return top;
}

bool Engine::run(Cycle limit) {
  while (!heap_.empty()) {
    if (heap_.front().when > limit) return false;
    Event e = pop();
    now_ = e.when;
    ++processed_;
    e.fn(e.object, e.arg);
    if (progress_ && (processed_ & kProgressMask) == 0) progress_(progress_context_);
  }
  return true;
}

}  // namespace bwsim
