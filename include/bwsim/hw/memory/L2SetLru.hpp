#pragma once
// l2.policy "set_lru": set-associative (L2SetAssociative), least recently used within each set. A
// block's recency is all that keeps it: a block read twice and then left goes before one read
// once after it, as on the H200 (h200_l2_reref.csv), where clock's second chance and set_rrip
// keep the twice-read block.
#include <vector>

#include "bwsim/hw/memory/L2SetAssociative.hpp"

namespace bwsim {

class L2SetLru final : public L2SetAssociative {
 public:
  L2SetLru(std::uint64_t capacity_blocks, const L2SetGeometry& geometry);
  void access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) override;

 private:
  // Per way, as the tags: the access count at its last touch. 32 bits keep a set's stamps in 4-5
  // host cache lines; when the count reaches 2^32 - 1 every stamp is halved (consecutive ones may
  // then tie), and again every 2^31 accesses.
  std::vector<std::uint32_t> last_use_;
  std::uint32_t accesses_ = 0;
  std::size_t least_recent(std::size_t first) const;
};

}  // namespace bwsim
