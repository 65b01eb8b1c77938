#include "bwsim/hw/sm/CorePipes.hpp"

namespace bwsim {
namespace {

// A cycle counter and its fraction of the used sub-partitions' cycles.
template <Cycle CorePipeStats::*Field>
void declare_busy(StatGroup<CorePipeStats>& g, const char* cycles, const char* cycles_description,
                  const char* fraction, const char* fraction_description) {
  g.counter(cycles, StatUnit::Cycles, cycles_description, Field)
      .formula(fraction, StatUnit::Fraction, fraction_description,
               [](const CorePipeStats& s, const StatContext& c) -> StatValue {
                 return CorePipeStats::busy_fraction(s.*Field, c);
               });
}

}  // namespace

const StatGroup<CorePipeStats>& CorePipeStats::declared() {
  static const StatGroup<CorePipeStats> group = [] {
    StatGroup<CorePipeStats> g("pipes");
    declare_busy<&CorePipeStats::issue_cycles>(
        g, "issue_cycles", "issue slots taken by CUDA-core instructions (summed over sub-partitions)",
        "issue_busy_fraction", "issue_cycles over the used sub-partitions' cycles");
    declare_busy<&CorePipeStats::fma_busy_cycles>(
        g, "fma_busy_cycles", "cycles the fp32 FMA pipes were taken (summed over sub-partitions)",
        "fma_busy_fraction", "fma_busy_cycles over the used sub-partitions' cycles");
    declare_busy<&CorePipeStats::alu_busy_cycles>(g, "alu_busy_cycles", "cycles the integer/logic ALU pipes were taken",
                                                  "alu_busy_fraction",
                                                  "alu_busy_cycles over the used sub-partitions' cycles");
    declare_busy<&CorePipeStats::mufu_busy_cycles>(
        g, "mufu_busy_cycles", "cycles the multi-function (ex2, rcp) pipes were taken", "mufu_busy_fraction",
        "mufu_busy_cycles over the used sub-partitions' cycles");
    declare_busy<&CorePipeStats::cvt_busy_cycles>(g, "cvt_busy_cycles", "cycles the conversion pipes were taken",
                                                  "cvt_busy_fraction",
                                                  "cvt_busy_cycles over the used sub-partitions' cycles");
    declare_busy<&CorePipeStats::tmem_port_cycles>(
        g, "tmem_port_cycles", "cycles the tcgen05.ld/st datapaths moved data (one per sub-partition's lane quadrant)",
        "tmem_port_busy_fraction", "tmem_port_cycles over the used sub-partitions' cycles");
    g.counter("smem_bytes", StatUnit::Bytes, "bytes warps moved with ld.shared / st.shared", &CorePipeStats::smem_bytes);
    return g;
  }();
  return group;
}

}  // namespace bwsim
