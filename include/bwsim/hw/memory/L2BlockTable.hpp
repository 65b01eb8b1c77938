#pragma once
// The index of the blocks an L2 policy holds: key (GMEM address) -> node, open addressing with
// linear probing, at most half full, backward-shift deletion (no tombstones). The nodes are the
// policy's own (each has a `key`; the rest is its replacement state), stored in one array that
// never reallocates, so a pointer into a node stays valid while the node holds its block. A slot
// keeps a tag of its key beside the node index, so probing and deletion read the table alone (a
// node lookup per probe step was a cache miss each in a table of tens of thousands of blocks).
// The tag is the key's 128-byte line number in 32 bits, which tells apart every key within
// 512 GiB of GMEM, so a slot is 8 bytes and a box's probes touch half the host cache lines that
// full keys took; a tag match of another key (keys 512 GiB apart, or two within one line) is told
// apart by the node's full key, which a hit reads anyway.
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
    table_.assign(std::bit_ceil(capacity * 2 + 2), Slot{});
    mask_ = table_.size() - 1;
  }

  // The node holding `key`, or kNoBlock with `slot` where it would go.
  std::uint32_t find(std::uint64_t key, std::uint64_t& slot) const {
    const std::uint32_t t = tag(key);
    slot = home_of_tag(t);
    while (table_[slot].node != kNoBlock && (table_[slot].tag != t || nodes_[table_[slot].node].key != key))
      slot = (slot + 1) & mask_;
    return table_[slot].node;
  }
  // Starts loading `key`'s home slot / node `n` into the host cache: a policy touching a box's
  // blocks asks for all of them first, so their cache misses overlap instead of queueing.
  void prefetch_slot(std::uint64_t key) const { __builtin_prefetch(&table_[home(key)]); }
  void prefetch_node(std::uint32_t n) const { __builtin_prefetch(&nodes_[n]); }
  bool full() const { return nodes_.size() >= capacity_; }
  // Adds `node` (not full) at the slot find() gave for its key; returns its index.
  std::uint32_t add(const Node& node, std::uint64_t slot) {
    const auto n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(node);
    table_[slot] = Slot{tag(node.key), n};
    return n;
  }
  // Node `n` (the evicted one) now holds `key`.
  void rekey(std::uint32_t n, std::uint64_t key) {
    std::uint64_t old = home(nodes_[n].key);
    while (table_[old].node != n) old = (old + 1) & mask_;
    erase_slot(old);
    nodes_[n].key = key;
    std::uint64_t s = home(key);  // the erase may have moved entries: probe again
    while (table_[s].node != kNoBlock) s = (s + 1) & mask_;
    table_[s] = Slot{tag(key), n};
  }
  Node& operator[](std::uint32_t n) { return nodes_[n]; }
  std::vector<Node>& nodes() { return nodes_; }
  std::uint64_t size() const { return nodes_.size(); }

 private:
  static std::uint32_t tag(std::uint64_t key) { return static_cast<std::uint32_t>(key >> 7); }
  std::uint64_t home_of_tag(std::uint32_t t) const { return mix64(t) & mask_; }
  std::uint64_t home(std::uint64_t key) const { return home_of_tag(tag(key)); }
  // Moves each later entry of the probe chain back into the hole unless its home lies cyclically
  // in (hole, entry], so every chain stays unbroken.
  void erase_slot(std::uint64_t slot) {
    for (std::uint64_t next = (slot + 1) & mask_;; next = (next + 1) & mask_) {
      if (table_[next].node == kNoBlock) break;
      const std::uint64_t h = home_of_tag(table_[next].tag);
      if (((next - h) & mask_) >= ((next - slot) & mask_)) {
        table_[slot] = table_[next];
        slot = next;
      }
    }
    table_[slot] = Slot{};
  }

  struct Slot {
    std::uint32_t tag = 0;
    std::uint32_t node = kNoBlock;  // or an empty slot
  };
  static_assert(sizeof(Slot) == 8);
  std::uint64_t capacity_;
  std::vector<Node> nodes_;
  std::vector<Slot> table_;
  std::uint64_t mask_ = 0;
};

}  // namespace bwsim
