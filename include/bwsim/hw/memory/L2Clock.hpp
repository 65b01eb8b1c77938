#pragma once
// l2.policy "clock": second-chance replacement. The blocks sit in a ring in the order they came
// in; a hit sets the block's reference bit; a miss in a full L2 sweeps the hand from the oldest
// block, clearing set bits (a second chance) until it finds one clear, which it evicts. A block
// comes in with its bit clear, so only a hit earns it a second pass. Cheaper than exact LRU in
// hardware (one bit per block) and it approximates it.
#include "bwsim/hw/memory/L2BlockTable.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"

namespace bwsim {

class L2Clock final : public L2Policy {
 public:
  explicit L2Clock(std::uint64_t capacity_blocks) : blocks_(capacity_blocks) {}
  void access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) override;
  std::uint64_t resident_blocks() const override { return blocks_.size(); }
  void clear_in_flight() override;

 private:
  struct Node {
    std::uint64_t key;
    L2InFlight in_flight;
    bool referenced;
  };
  L2BlockTable<Node> blocks_;  // node index = ring position
  std::uint32_t hand_ = 0;     // the oldest block once the ring is full
};

}  // namespace bwsim
