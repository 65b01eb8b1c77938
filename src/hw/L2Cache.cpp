#include "bwsim/hw/L2Cache.hpp"

#include <bit>

#include "bwsim/core/Bits.hpp"

namespace bwsim {
namespace {
std::uint64_t hash(std::uint64_t key) { return mix64(key); }
}  // namespace

L2Cache::L2Cache(std::uint64_t capacity_blocks) : capacity_(capacity_blocks) {
  nodes_.reserve(capacity_blocks);
  table_.assign(std::bit_ceil(capacity_blocks * 2 + 2), kNone);  // at most half full
  mask_ = table_.size() - 1;
}

// Backward-shift deletion keeps every probe chain unbroken without tombstones.
void L2Cache::erase_slot(std::uint64_t slot) {
  for (std::uint64_t next = (slot + 1) & mask_;; next = (next + 1) & mask_) {
    const std::uint32_t n = table_[next];
    if (n == kNone) break;
    const std::uint64_t home = hash(nodes_[n].key) & mask_;
    // Move n back into the hole if its home does not lie cyclically in (slot, next].
    if (((next - home) & mask_) >= ((next - slot) & mask_)) {
      table_[slot] = n;
      slot = next;
    }
  }
  table_[slot] = kNone;
}

void L2Cache::unlink(std::uint32_t n) {
  Node& x = nodes_[n];
  (x.prev == kNone ? head_ : nodes_[x.prev].next) = x.next;
  (x.next == kNone ? tail_ : nodes_[x.next].prev) = x.prev;
}

void L2Cache::push_front(std::uint32_t n) {
  nodes_[n].prev = kNone;
  nodes_[n].next = head_;
  (head_ == kNone ? tail_ : nodes_[head_].prev) = n;
  head_ = n;
}

L2Cache::Touch L2Cache::access(std::uint64_t key) {
  std::uint64_t s = hash(key) & mask_;
  while (table_[s] != kNone && nodes_[table_[s]].key != key) s = (s + 1) & mask_;
  if (table_[s] != kNone) {
    const std::uint32_t n = table_[s];
    if (n != head_) {
      unlink(n);
      push_front(n);
    }
    return Touch{true, nodes_[n].in_flight_until};
  }
  std::uint32_t n;
  if (nodes_.size() < capacity_) {
    n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(Node{key, kNone, kNone, 0});
    ++size_;
  } else {  // evict the least recently used block and reuse its node
    n = tail_;
    unlink(n);
    std::uint64_t old = hash(nodes_[n].key) & mask_;
    while (table_[old] != n) old = (old + 1) & mask_;
    erase_slot(old);
    nodes_[n].key = key;
    nodes_[n].in_flight_until = 0;
    s = hash(key) & mask_;  // the erase may have moved entries: probe again
    while (table_[s] != kNone) s = (s + 1) & mask_;
  }
  table_[s] = n;
  push_front(n);
  return Touch{false, nodes_[n].in_flight_until};
}

}  // namespace bwsim
