#pragma once
// Which parts of GMEM the L2 holds, for the hit/miss decision of every TMA access. Residency is
// tracked per block of 8 rows x one 128-byte line of a tensor (1 KiB for a full box row width):
// coarse enough to cost a handful of lookups per TMA box, fine enough that a tile read by one CTA
// and then by another hits. Replacement is least-recently-used over the whole capacity (one
// shared L2; the two die halves of a B200 are not told apart).
#include <cstdint>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

class L2Cache {
 public:
  // `capacity_blocks`: how many blocks fit (L2 bytes / bytes per block).
  explicit L2Cache(std::uint64_t capacity_blocks);

  // Touches the block `key` (its GMEM address): whether it was resident, and the cycle its last
  // transfer towards an SM ends (the caller updates it; valid until the next access). A missing
  // block is brought in, evicting the least recently used one when full.
  struct Touch {
    bool hit;
    Cycle& in_flight_until;
  };
  Touch access(std::uint64_t key);
  std::uint64_t resident_blocks() const { return size_; }
  // A new launch restarts the clock: no transfer is in flight any more.
  void clear_in_flight() {
    for (Node& n : nodes_) n.in_flight_until = 0;
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Node {
    std::uint64_t key;
    std::uint32_t prev, next;  // LRU list: head_ most recent
    Cycle in_flight_until;
  };
  void erase_slot(std::uint64_t slot);
  void unlink(std::uint32_t n);
  void push_front(std::uint32_t n);

  std::uint64_t capacity_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> table_;  // open addressing, linear probing: node index or kNone
  std::uint64_t mask_ = 0;
  std::uint64_t size_ = 0;
  std::uint32_t head_ = kNone, tail_ = kNone;
};

}  // namespace bwsim
