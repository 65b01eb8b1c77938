#pragma once
// l2.policy "set_rrip": set-associative (l2.ways blocks per set, sets by a hash of the block's
// address: the L2's hash is not published) with re-reference interval prediction in each set. A
// block comes in predicted distant (2 of 0..3), a hit predicts it near (0); a miss evicts a way
// predicted 3, the first in way order, and when there is none ages every way of the set by one until
// there is. The first such way is not the oldest, so a block read once can go soon after it came
// in, and more often the further its next read: the loss grows gradually with the reuse distance
// (h100_l2_partitions.csv's lag rows), where a fully associative policy (lru, clock) keeps every
// block up to the capacity and none past it. Not the Hopper configs' policy (README, "silicon's L2
// loses lines gradually"): it also loses data read again from a nearly full L2, which silicon keeps.
#include <vector>

#include "bwsim/hw/memory/L2Policy.hpp"

namespace bwsim {

class L2SetRrip final : public L2Policy {
 public:
  L2SetRrip(std::uint64_t capacity_blocks, std::uint32_t ways);
  void access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) override;
  std::uint64_t resident_blocks() const override { return resident_; }
  void clear_in_flight() override;

 private:
  static constexpr std::uint8_t kDistant = 3, kInserted = 2;
  struct Way {
    std::uint64_t key = 0;
    L2InFlight in_flight;
    bool valid = false;
    std::uint8_t rrpv = kDistant;
  };
  std::uint64_t set_of(std::uint64_t key) const;

  std::uint32_t ways_;
  std::uint64_t sets_;
  std::vector<Way> slots_;  // sets_ x ways_, a set's ways together
  std::uint64_t resident_ = 0;
};

}  // namespace bwsim
