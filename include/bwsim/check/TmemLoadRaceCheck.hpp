#pragma once
// The race check of one tcgen05.ld: a command for the race-checking thread that absorbs the
// warp's next tcgen05.ld when nothing was posted in between and its columns continue these
// (attention's softmax reads a row of S as four loads of 32 columns). Checking and recording the
// joined columns finds a race where checking each load would: a record overlaps the union where
// it overlaps one of them, and the loads have one issuer, one clock and one completion (the next
// tcgen05.wait::ld). Inline, each load is checked as it issues, so an error names its columns.
#include <cstdint>

#include "bwsim/check/RaceChecker.hpp"

namespace bwsim {

class Cta;
struct WarpState;

struct TmemLoadRaceCheck {
  Cta* cta;
  WarpState* ws;
  std::uint32_t begin, end;  // TMEM columns

  void operator()() const { races::tmem_load(*cta, *ws, begin, end); }
  bool absorb(const TmemLoadRaceCheck& next) {
    if (next.cta != cta || next.ws != ws || next.begin != end) return false;
    end = next.end;
    return true;
  }
};

}  // namespace bwsim
