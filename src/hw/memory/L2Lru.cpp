#include "bwsim/hw/memory/L2Lru.hpp"

#include <algorithm>

namespace bwsim {

void L2Lru::touched(std::uint32_t n) {
  blocks_[n].stamp = ++stamps_;
  log_.push_back(Touch{n, stamps_, blocks_[n].key});
}

std::uint32_t L2Lru::evict() {
  while (log_[log_head_].stamp != blocks_[log_[log_head_].node].stamp) ++log_head_;
  return log_[log_head_++].node;
}

void L2Lru::compact() {
  const auto live = std::remove_if(log_.begin() + static_cast<std::ptrdiff_t>(log_head_), log_.end(),
                                   [&](const Touch& t) { return t.stamp != blocks_[t.node].stamp; });
  log_.erase(std::move(log_.begin() + static_cast<std::ptrdiff_t>(log_head_), live, log_.begin()), log_.end());
  log_head_ = 0;
}

void L2Lru::access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) {
  // Host-cache prefetches only (results do not depend on them): the box's slots, then the nodes
  // they hold and the eviction candidates at the log's head with their slots.
  for (const std::uint64_t key : keys) blocks_.prefetch_slot(key);
  std::uint64_t unused;
  for (const std::uint64_t key : keys)
    if (const std::uint32_t n = blocks_.find(key, unused); n != kNoBlock) blocks_.prefetch_node(n);
  if (blocks_.full())
    for (std::size_t i = log_head_; i < log_.size() && i < log_head_ + keys.size(); ++i) {
      blocks_.prefetch_node(log_[i].node);
      blocks_.prefetch_slot(log_[i].key);
    }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint64_t key = keys[i];
    std::uint64_t slot;
    std::uint32_t n = blocks_.find(key, slot);
    const bool hit = n != kNoBlock;
    if (!hit) {
      if (!blocks_.full()) {
        n = blocks_.add(Node{key, 0, 0}, slot);
      } else {  // evict the least recently used block and reuse its node
        n = evict();
        blocks_.rekey(n, key);
        blocks_[n].in_flight = {};
      }
    }
    touched(n);
    out[i] = L2Touch{hit, blocks_[n].in_flight, &blocks_[n].in_flight};
  }
  // Live entries are at most one per block: compacting when the log (its evicted prefix included)
  // is three times that keeps it O(capacity) at O(1) per touch.
  if (log_.size() > 3 * blocks_.size() + 1024) compact();
}

void L2Lru::clear_in_flight() {
  for (Node& n : blocks_.nodes()) n.in_flight = {};
}

}  // namespace bwsim
