#pragma once
// The CUDA-core pipes of an SM's sub-partitions (config pipes.*_lanes) and the cycles each was
// taken.
#include <cstdint>

#include "bwsim/core/Stats.hpp"

namespace bwsim {

enum class CorePipe : std::uint8_t { Fma, Alu, Mufu, Cvt, kCount };
inline constexpr std::uint32_t kSubPartitions = 4;  // per SM; warp w issues on sub-partition w % 4

struct CorePipeStats {
  // Cycles each pipe was taken, summed over the SM's sub-partitions.
  Cycle fma_busy_cycles = 0, alu_busy_cycles = 0, mufu_busy_cycles = 0, cvt_busy_cycles = 0;
  // Issue slots the CUDA-core instructions took (Warp::execute and Warp::run), summed likewise.
  Cycle issue_cycles = 0;
  // Bytes the SM's warps moved with ld.shared / st.shared (the power model's SMEM traffic; TMA and
  // MMA operand traffic is priced with those units).
  std::uint64_t smem_bytes = 0;
  // Cycles each sub-partition's tcgen05.ld/st datapath (its quadrant of TMEM lanes) moved data.
  Cycle tmem_port_cycles = 0;
  static constexpr Cycle CorePipeStats::*field(CorePipe pipe) {
    constexpr Cycle CorePipeStats::*kField[] = {&CorePipeStats::fma_busy_cycles, &CorePipeStats::alu_busy_cycles,
                                                &CorePipeStats::mufu_busy_cycles, &CorePipeStats::cvt_busy_cycles};
    return kField[static_cast<std::size_t>(pipe)];
  }
  Cycle& busy_cycles(CorePipe pipe) { return this->*field(pipe); }
  Cycle busy_cycles(CorePipe pipe) const { return this->*field(pipe); }
  // `busy` pipe cycles over the sub-partitions' cycles of the instances.
  static double busy_fraction(Cycle busy, const StatContext& c) { return c.busy_fraction(busy) / kSubPartitions; }
  static const StatGroup<CorePipeStats>& declared();  // "pipes.*", per SM
};

}  // namespace bwsim
