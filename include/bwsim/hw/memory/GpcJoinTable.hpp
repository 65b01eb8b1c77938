#pragma once
// The last transfer of each L2 line to each GPC, for l2.join_scope: gpc. Hopper's request
// coalescer joins reads of a line only among the SMs of one GPC (ours: h100_l2_merge_ncu.csv, the
// shared ring: readers of a box one per GPC reach the slices 8.38 M times of 8.65 M, readers
// within a GPC 4.82 M), so a read looks for the line's transfer to its own GPC, not for the line's
// last transfer to any SM (an SM of another GPC reading the line in between does not hide it).
//
// Direct-mapped over (line, GPC): a slot holds one pair's record and a pair that maps to a taken
// slot replaces it (a join lost, never a join invented: the key is checked). Only transfers still
// joinable matter, so the table is sized by what can be in flight, not by the L2.
#include <cstdint>

#include "bwsim/core/HugePageArray.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"

namespace bwsim {

class GpcJoinTable {
 public:
  // `slots` is rounded up to a power of two.
  explicit GpcJoinTable(std::uint64_t slots);
  // The record of `line`'s last transfer to GPC `gpc` (until 0 if there is none); the caller
  // writes a new transfer into it. Valid until the next call.
  L2InFlight& of(std::uint64_t line, std::uint32_t gpc) {
    const std::uint64_t key = key_of(line, gpc);
    Slot& s = slots_[slot_of(key)];
    if (s.key != key) s = Slot{key, {}};
    return s.last;
  }
  // Starts loading the slot of (line, gpc) into the host cache (results do not depend on it): a
  // box asks for its lines' slots before its L2 lookup, so their misses overlap that work.
  void prefetch(std::uint64_t line, std::uint32_t gpc) const { __builtin_prefetch(&slots_[slot_of(key_of(line, gpc))]); }
  // A new launch: its clock starts at 0, so no earlier transfer is in flight.
  void clear();

 private:
  struct Slot {
    std::uint64_t key = ~std::uint64_t{0};  // line x 256 + GPC
    L2InFlight last;
  };
  static std::uint64_t key_of(std::uint64_t line, std::uint32_t gpc) { return line << 8 | gpc; }
  // Fibonacci hashing: the high bits of the product.
  std::uint64_t slot_of(std::uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
  HugePageArray<Slot> slots_;
  unsigned shift_ = 0;  // 64 - log2(slots)
};

}  // namespace bwsim
