#pragma once
// l2.policy "set_rrip": set-associative (L2SetAssociative) with re-reference interval prediction
// in each set. A block comes in predicted distant (2 of 0..3), a hit predicts it near (0); a miss
// evicts a way predicted 3, the first in way order, and when there is none ages every way of the
// set by one until there is. A block read twice outlasts one read once after it, which the H200
// does not do (h200_l2_reref.csv; set_lru is the Hopper configs' choice).
#include <vector>

#include "bwsim/hw/memory/L2SetAssociative.hpp"

namespace bwsim {

class L2SetRrip final : public L2SetAssociative {
 public:
  L2SetRrip(std::uint64_t capacity_blocks, const L2SetGeometry& geometry);
  void access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) override;

 private:
  static constexpr std::uint8_t kDistant = 3, kInserted = 2;
  std::vector<std::uint8_t> rrpv_;  // per way, as the tags
};

}  // namespace bwsim
