#pragma once
// l2.policy "lru": exact least-recently-used replacement over the whole capacity (a doubly linked
// recency list through the nodes).
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
    std::uint32_t prev, next;  // recency list: head_ most recent
    Cycle in_flight_until;
  };
  void unlink(std::uint32_t n);
  void push_front(std::uint32_t n);

  L2BlockTable<Node> blocks_;
  std::uint32_t head_ = kNoBlock, tail_ = kNoBlock;
};

}  // namespace bwsim
