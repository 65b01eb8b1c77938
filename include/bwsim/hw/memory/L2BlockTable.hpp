#pragma once
// The index of the blocks an L2 policy holds: key (GMEM address) -> node, open addressing with
// linear probing, at most half full, backward-shift deletion (no tombstones). The nodes are the
// policy's own (each has a `key`; the rest is its replacement state), stored in one array that
// never reallocates, so a pointer into a node stays valid while the node holds its block.
#include <bit>
#include <cstdint>
#include <vector>

#include "bwsim/core/Bits.hpp"

namespace bwsim {

inline constexpr std::uint32_t kNoBlock = 0xffffffffu;  // no node: an empty slot, a missing key

template <class Node>
class L2BlockTable {
 public:

  explicit L2BlockTable(std::uint64_t capacity) : capacity_(capacity) {
    nodes_.reserve(capacity);
    table_.assign(std::bit_ceil(capacity * 2 + 2), kNoBlock);
    mask_ = table_.size() - 1;
  }

  // The node holding `key`, or kNoBlock with `slot` where it would go.
  std::uint32_t find(std::uint64_t key, std::uint64_t& slot) const {
    slot = home(key);
    while (table_[slot] != kNoBlock && nodes_[table_[slot]].key != key) slot = (slot + 1) & mask_;
    return table_[slot];
  }
  bool full() const { return nodes_.size() >= capacity_; }
  // Adds `node` (not full) at the slot find() gave for its key; returns its index.
  std::uint32_t add(const Node& node, std::uint64_t slot) {
    const auto n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(node);
    table_[slot] = n;
    return n;
  }
  // Node `n` (the evicted one) now holds `key`.
  void rekey(std::uint32_t n, std::uint64_t key) {
    std::uint64_t old = home(nodes_[n].key);
    while (table_[old] != n) old = (old + 1) & mask_;
    erase_slot(old);
    nodes_[n].key = key;
    std::uint64_t s = home(key);  // the erase may have moved entries: probe again
    while (table_[s] != kNoBlock) s = (s + 1) & mask_;
    table_[s] = n;
  }
  Node& operator[](std::uint32_t n) { return nodes_[n]; }
  std::vector<Node>& nodes() { return nodes_; }
  std::uint64_t size() const { return nodes_.size(); }

 private:
  std::uint64_t home(std::uint64_t key) const { return mix64(key) & mask_; }
  // Moves each later entry of the probe chain back into the hole unless its home lies cyclically
  // in (hole, entry], so every chain stays unbroken.
  void erase_slot(std::uint64_t slot) {
    for (std::uint64_t next = (slot + 1) & mask_;; next = (next + 1) & mask_) {
      const std::uint32_t n = table_[next];
      if (n == kNoBlock) break;
      const std::uint64_t h = home(nodes_[n].key);
      if (((next - h) & mask_) >= ((next - slot) & mask_)) {
        table_[slot] = n;
        slot = next;
      }
    }
    table_[slot] = kNoBlock;
  }

  std::uint64_t capacity_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> table_;  // node index or kNoBlock
  std::uint64_t mask_ = 0;
};

}  // namespace bwsim
