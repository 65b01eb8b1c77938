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
#include <vector>

#include "bwsim/hw/memory/L2Policy.hpp"

namespace bwsim {

class GpcJoinTable {
 public:
  // `slots` is rounded up to a power of two.
  explicit GpcJoinTable(std::uint64_t slots);
  // The record of `line`'s last transfer to GPC `gpc` (until 0 if there is none); the caller
  // writes a new transfer into it. Valid until the next call.
  L2InFlight& of(std::uint64_t line, std::uint32_t gpc);
  // A new launch: its clock starts at 0, so no earlier transfer is in flight.
  void clear();

 private:
  struct Slot {
    std::uint64_t key = ~std::uint64_t{0};  // line x 256 + GPC
    L2InFlight last;
  };
  std::vector<Slot> slots_;
  unsigned shift_ = 0;  // 64 - log2(slots)
};

}  // namespace bwsim
