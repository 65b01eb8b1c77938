#include "bwsim/hw/memory/L2Lru.hpp"

namespace bwsim {

void L2Lru::unlink(std::uint32_t n) {
  Node& x = blocks_[n];
  (x.prev == kNoBlock ? head_ : blocks_[x.prev].next) = x.next;
  (x.next == kNoBlock ? tail_ : blocks_[x.next].prev) = x.prev;
}

void L2Lru::push_front(std::uint32_t n) {
  blocks_[n].prev = kNoBlock;
  blocks_[n].next = head_;
  (head_ == kNoBlock ? tail_ : blocks_[head_].prev) = n;
  head_ = n;
}

void L2Lru::access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint64_t key = keys[i];
    std::uint64_t slot;
    std::uint32_t n = blocks_.find(key, slot);
    const bool hit = n != kNoBlock;
    if (hit) {
      if (n != head_) {
        unlink(n);
        push_front(n);
      }
    } else {
      if (!blocks_.full()) {
        n = blocks_.add(Node{key, kNoBlock, kNoBlock, 0}, slot);
      } else {  // evict the least recently used block and reuse its node
        n = tail_;
        unlink(n);
        blocks_.rekey(n, key);
        blocks_[n].in_flight_until = 0;
      }
      push_front(n);
    }
    out[i] = L2Touch{hit, blocks_[n].in_flight_until, &blocks_[n].in_flight_until};
  }
}

void L2Lru::clear_in_flight() {
  for (Node& n : blocks_.nodes()) n.in_flight_until = 0;
}

}  // namespace bwsim
