#include "bwsim/core/Engine.hpp"

#include <algorithm>
#include <bit>
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

Engine::Engine() : head_(kWindow, kNil), tail_(kWindow, kNil), occupied_(kWindow / 64, 0) {
  heap_.reserve(64);
  nodes_.reserve(4096);
}

void Engine::schedule_general(Cycle when, EventFn fn, void* object, std::uint64_t arg) {
  assert(when >= now_);
  if (when < now_) when = now_;
  if (shuffle_) {
    push_heap(Event{when, drawn_seq(), fn, object, arg});
    return;
  }
  const Event e{when, seq_++, fn, object, arg};
  if (when - now_ < kWindow)
    push_bucket(e);
  else
    push_heap(e);
}

std::uint64_t Engine::drawn_seq() {  // the low part keeps keys unique
  return (splitmix64(rng_) << 40) | (seq_++ & ((1ull << 40) - 1));
}

void Engine::schedule_as(std::uint64_t seq, Cycle when, EventFn fn, void* object, std::uint64_t arg) {
  assert(when >= now_);
  // Buckets keep their events in scheduling order; an event with an earlier place goes to the heap.
  push_heap(Event{std::max(when, now_), seq, fn, object, arg});
}

void Engine::schedule_resume(Cycle when, std::coroutine_handle<> handle) {
  schedule(when, &resume_coroutine, handle.address());
}

std::uint32_t Engine::new_node(const Event& e) {
  nodes_.push_back(Node{e, kNil});
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

std::uint32_t Engine::first_bucket() const {
  // Buckets hold cycles [now, now + kWindow): scan the bitmap cyclically from now's bucket.
  const std::uint32_t start = static_cast<std::uint32_t>(now_) & (kWindow - 1);
  std::uint32_t w = start / 64;
  std::uint64_t bits = occupied_[w] & (~0ull << (start % 64));
  for (std::uint32_t i = 0; i <= kWindow / 64; ++i) {
    if (bits) return w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits));
    w = (w + 1) % (kWindow / 64);
    bits = occupied_[w];
  }
  assert(false);
  return 0;
}

void Engine::push_heap(const Event& e) {
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

Engine::Event Engine::pop_heap() {
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

Engine::Event Engine::pop_bucket(std::uint32_t b) {
  const std::uint32_t n = head_[b];
  head_[b] = nodes_[n].next;
  if (head_[b] == kNil) occupied_[b / 64] &= ~(1ull << (b % 64));
  nodes_[n].next = free_;
  free_ = n;
  --bucketed_;
  return nodes_[n].event;
}

bool Engine::run(Cycle limit) {
  for (;;) {
    // The next event: the first bucket's head, or the heap's top where that comes first.
    // (Mostly more events of the cycle now: its bucket, found without scanning the bitmap.)
    std::uint32_t b = static_cast<std::uint32_t>(now_) & (kWindow - 1);
    if (bucketed_ != 0 && head_[b] == kNil) b = first_bucket();
    const Event* bucket = bucketed_ != 0 ? &nodes_[head_[b]].event : nullptr;
    const bool from_heap =
        !heap_.empty() && (!bucket || before(heap_.front().when, heap_.front().seq, bucket->when, bucket->seq));
    const Event* next = from_heap ? &heap_.front() : bucket;
    if (!next) return true;
    if (next->when > limit) return false;
    const Event e = from_heap ? pop_heap() : pop_bucket(b);
    // Host-cache prefetch only: the object of the cycle's next event (its state is usually a cold
    // line), so that miss overlaps this event's work.
    if (!from_heap && head_[b] != kNil) __builtin_prefetch(nodes_[head_[b]].event.object);
    now_ = e.when;
    running_seq_ = e.seq;
    ++processed_;
    e.fn(e.object, e.arg);
    if (progress_ && (processed_ & kProgressMask) == 0) progress_(progress_context_);
  }
}

}  // namespace bwsim
