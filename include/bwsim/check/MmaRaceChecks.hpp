#pragma once
// The race checks of one tcgen05.mma, in each CTA it touches: a command for the race-checking
// thread (SimContext::race_check_absorbing). There it absorbs the warp's next MMA when nothing was
// posted in between (so the warp's clock and commit count are the same for both) and each operand
// range starts inside the reads before it (the extension rule of the checker's operand records).
// Checking the union then finds what checking each MMA would (a record the union overlaps overlaps
// one of them, judged against the same clock), and the reads are recorded as the MMAs one by one
// would record them (the first one's record, widened): one command for the k-steps of a tile
// instead of one each. Inline, each MMA is checked as it issues, so an error names its
// instruction and cycle.
#include <algorithm>
#include <cstdint>

#include "bwsim/check/RaceChecker.hpp"
#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Cta.hpp"

namespace bwsim {

struct MmaRaceChecks {
  // Reads [begin, end), of which the first MMA's are [begin, first_end).
  struct Reads {
    std::uint32_t begin, end, first_end;
    static Reads of(std::uint32_t begin, std::uint32_t end) { return {begin, end, end}; }
    bool extended_by(const Reads& next) const { return next.begin >= begin && next.begin <= end; }
  };
  Cta* cta;
  WarpState* ws;
  Reads a;  // SMEM bytes, or TMEM columns when a_tmem
  Reads b;  // SMEM bytes
  std::uint32_t d_begin, d_end;  // TMEM columns of the accumulator
  bool a_tmem, pair;

  void operator()() const {
    for (std::uint32_t c = 0; c < (pair ? 2u : 1u); ++c) {
      Cta& target = cta->cluster().cta(cta->rank() + c);
      if (!a_tmem) races::mma_operand(target, *ws, a.begin, a.end, "its A operand", a.first_end);
      else races::mma_tmem_operand(target, *ws, a.begin, a.end, a.first_end);
      races::mma_operand(target, *ws, b.begin, b.end, "its B operand", b.first_end);
      races::mma_accumulator(target, *ws, d_begin, d_end);
    }
  }
  bool absorb(const MmaRaceChecks& next) {
    if (next.cta != cta || next.ws != ws || next.a_tmem != a_tmem || next.pair != pair || next.d_begin != d_begin ||
        next.d_end != d_end || !a.extended_by(next.a) || !b.extended_by(next.b))
      return false;
    a.end = std::max(a.end, next.a.end);
    b.end = std::max(b.end, next.b.end);
    return true;
  }
};

}  // namespace bwsim
