#pragma once
// What the set-associative L2 policies (set_lru, set_rrip) share: the sets and their tags. The
// sets are 2^round(log2(capacity / l2.ways)); which set a block lives in is hw/memory/L2SetIndex's
// (its address folded by XOR, or, with l2.page_bytes, hashed within pages whose frames scatter). A
// policy keeps its own per-way state beside the tags and decides which way a miss takes.
#include <vector>

#include "bwsim/hw/memory/L2Policy.hpp"
#include "bwsim/hw/memory/L2SetIndex.hpp"

namespace bwsim {

class L2SetAssociative : public L2Policy {
 public:
  std::uint64_t resident_blocks() const override { return resident_; }
  void clear_in_flight() override;

 protected:
  // Keys are GMEM addresses of `line_bytes`-aligned lines.
  L2SetAssociative(std::uint64_t capacity_blocks, const L2SetGeometry& geometry);

  // Where `key` lives: its set's first way (sets_ x stride_ ways, a set's ways together), its tag,
  // and the way holding it, else the set's first empty way, else `first + ways_` (the set is full).
  struct Slot {
    std::size_t first, way;
    std::uint32_t tag;
    bool hit;
  };
  Slot find(std::uint64_t key) const;
  // A miss's block comes into `way` (an empty one counts as resident from now on).
  void fill(const Slot& s, std::size_t way);
  // Host-cache prefetches only (results do not depend on them): each key's set, its tags and the
  // policy's per-way `state`, so that a box's misses overlap.
  template <class T>
  void prefetch_sets(std::span<const std::uint64_t> keys, const std::vector<T>& state) const {
    for (const std::uint64_t key : keys) {
      const std::size_t first = set_of_(line_of(key)) * stride_;
      __builtin_prefetch(&tags_[first]);
      __builtin_prefetch(&state[first]);
    }
  }
  L2Touch touch(std::size_t way, bool hit) { return L2Touch{hit, in_flight_[way], &in_flight_[way]}; }
  std::size_t way_slots() const { return tags_.size(); }  // sets_ x stride_: the size of per-way state

  std::uint32_t ways_;    // capacity / sets_, so l2.ways is honoured within a factor of sqrt(2)
  std::uint32_t stride_;  // ways_ rounded up to whole words of tags (the rest kPadding)

 private:
  static constexpr std::uint32_t kEmpty = 0, kPadding = 0xffffffff;  // tags of a way without a block, of no way
  static constexpr std::uint32_t kTagsPerWord = 2;
  std::uint64_t line_of(std::uint64_t key) const { return key / line_bytes_; }
  std::uint32_t tag_of(std::uint64_t line) const;
  std::size_t find_way(std::size_t first, std::uint32_t tag) const;

  std::uint64_t line_bytes_;  // the keys' unit
  std::uint32_t set_bits_;
  std::uint64_t sets_;  // a power of two: 2^round(log2(capacity / l2.ways))
  L2SetIndex set_of_;
  std::vector<std::uint32_t> tags_;
  std::vector<L2InFlight> in_flight_;
  std::uint64_t resident_ = 0;
};

}  // namespace bwsim
