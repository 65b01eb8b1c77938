#pragma once
// l2.policy "lru": exact least-recently-used replacement over the whole capacity.
//
// Recency is a log rather than a linked list: every touch stamps its block with the next number
// and appends (block, stamp) to a FIFO; the least recently used block is the first log entry whose
// stamp is still its block's (older entries of a block touched again since are stale and skipped).
// A touch then writes one node and appends sequentially, where unlinking from a list touched the
// two neighbours too, each a cache miss in a table of tens of thousands of blocks. The log is
// compacted to its live entries when it grows to three times the blocks, so it stays O(capacity).
#include <vector>

#include "bwsim/hw/memory/L2BlockTable.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"

namespace bwsim {

class L2Lru final : public L2Policy {
 public:
  explicit L2Lru(std::uint64_t capacity_blocks) : blocks_(capacity_blocks) {}
  void access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) override;
  std::uint64_t resident_blocks() const override { return blocks_.size(); }
  void clear_in_flight() override;

 private:
  struct Node {
    std::uint64_t key;
    std::uint64_t stamp;  // of its last touch
    L2InFlight in_flight;
  };
  struct Touch {
    std::uint32_t node;
    std::uint64_t stamp;
    std::uint64_t key;  // the node's then (to prefetch an eviction's table slot without the node)
  };
  void touched(std::uint32_t n);
  std::uint32_t evict();
  void compact();

  L2BlockTable<Node> blocks_;
  std::vector<Touch> log_;  // touches, oldest first from log_head_
  std::size_t log_head_ = 0;
  std::uint64_t stamps_ = 0;
};

}  // namespace bwsim
