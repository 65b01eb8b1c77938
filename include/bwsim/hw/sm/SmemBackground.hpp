#pragma once
// The SM's SMEM bandwidth that other units take beside generic ld/st.shared: wgmma reading its
// operands and TMA loads writing their boxes. They are served first; a warp's ld/st.shared moves
// its bytes in what is left of the SM's smem.bytes_per_cycle (ours: h100/h200_epilogue.csv
// "epilogue_bg_*": a warpgroup's chunk of 16 st.shared.b32 per thread takes 70 cycles alone, 160
// beside back-to-back wgmma.m64n256k16 SS reading 10 KiB per 128-137 cycles, 138 beside the RS form
// reading 8 KiB, 105 beside 8 KiB TMA loads into SMEM, and 74 beside TMA stores reading SMEM,
// which do not count; the wgmmas themselves slow by 3-8%, which is not modeled).
#include <cstdint>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

class SmemBackground {
 public:
  enum class Source : std::uint8_t {
    Mma,      // an MMA reading its SMEM operands
    Landing,  // a TMA load's box landing: together at most the landing rate (the SM's one TMA unit)
  };
  // `source` takes `bytes_per_cycle` of SMEM over [start, end) (`now`: the engine's clock, before
  // which the intervals that ended are dropped).
  void add(Cycle now, Cycle start, Cycle end, double bytes_per_cycle, Source source);
  // The cycles from `from` that `port_cycles` of the port's whole rate (`port_bytes_per_cycle`)
  // take in what the units leave, at least `port_cycles`; boxes landing together take at most
  // `landing_bytes_per_cycle`. Intervals that ended by `now` (the engine's clock) are dropped: no
  // transfer starts before it.
  Cycle stretch(Cycle now, Cycle from, Cycle port_cycles, double port_bytes_per_cycle, double landing_bytes_per_cycle);
  std::size_t intervals() const { return live_.size(); }

 private:
  void drop_ended(Cycle now);

  struct Interval {
    Cycle start, end;
    double bytes_per_cycle;
    Source source;
  };
  std::vector<Interval> live_;
};

}  // namespace bwsim
