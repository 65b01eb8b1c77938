#include "bwsim/hw/memory/L2Clock.hpp"

namespace bwsim {

void L2Clock::access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) {
  // Host-cache prefetches only (results do not depend on them), so that a box's misses overlap
  // instead of queueing: its blocks' slots and, with the L2 full, the slots of the blocks next on
  // the ring (the sweep evicts from there, and the eviction rewrites its slot).
  for (const std::uint64_t key : keys) blocks_.prefetch_slot(key);
  if (blocks_.full()) {
    const auto ring = static_cast<std::uint32_t>(blocks_.size());
    for (std::uint32_t i = 0, h = hand_; i < keys.size(); ++i, h = h + 1 == ring ? 0 : h + 1)
      blocks_.prefetch_slot(blocks_[h].key);
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint64_t key = keys[i];
    std::uint64_t slot;
    std::uint32_t n = blocks_.find(key, slot);
    const bool hit = n != kNoBlock;
    if (hit) {
      blocks_[n].referenced = true;
    } else if (!blocks_.full()) {
      n = blocks_.add(Node{key, 0, false}, slot);
    } else {
      const auto ring = static_cast<std::uint32_t>(blocks_.size());
      while (blocks_[hand_].referenced) {
        blocks_[hand_].referenced = false;
        hand_ = (hand_ + 1) % ring;
      }
      n = hand_;
      hand_ = (hand_ + 1) % ring;
      blocks_.rekey(n, key);
      blocks_[n].in_flight = {};
    }
    out[i] = L2Touch{hit, blocks_[n].in_flight, &blocks_[n].in_flight};
  }
}

void L2Clock::clear_in_flight() {
  for (Node& n : blocks_.nodes()) n.in_flight = {};
}

}  // namespace bwsim
