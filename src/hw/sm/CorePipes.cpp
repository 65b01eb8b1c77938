#include "bwsim/hw/sm/CorePipes.hpp"

namespace bwsim {

const StatGroup<CorePipeStats>& CorePipeStats::declared() {
  static const StatGroup<CorePipeStats> group = [] {
    StatGroup<CorePipeStats> g("pipes");
    g.counter("issue_cycles", StatUnit::Cycles,
              "issue slots taken by CUDA-core instructions (summed over sub-partitions)", &CorePipeStats::issue_cycles)
        .formula("issue_busy_fraction", StatUnit::Fraction, "issue_cycles over the used sub-partitions' cycles",
                 [](const CorePipeStats& s, const StatContext& c) -> StatValue {
                   return busy_fraction(s.issue_cycles, c);
                 })
        .counter("fma_busy_cycles", StatUnit::Cycles, "cycles the fp32 FMA pipes were taken (summed over sub-partitions)",
              &CorePipeStats::fma_busy_cycles)
        .formula("fma_busy_fraction", StatUnit::Fraction, "fma_busy_cycles over the used sub-partitions' cycles",
                 [](const CorePipeStats& s, const StatContext& c) -> StatValue {
                   return busy_fraction(s.fma_busy_cycles, c);
                 })
        .counter("alu_busy_cycles", StatUnit::Cycles, "cycles the integer/logic ALU pipes were taken",
                 &CorePipeStats::alu_busy_cycles)
        .formula("alu_busy_fraction", StatUnit::Fraction, "alu_busy_cycles over the used sub-partitions' cycles",
                 [](const CorePipeStats& s, const StatContext& c) -> StatValue {
                   return busy_fraction(s.alu_busy_cycles, c);
                 })
        .counter("mufu_busy_cycles", StatUnit::Cycles, "cycles the multi-function (ex2, rcp) pipes were taken",
                 &CorePipeStats::mufu_busy_cycles)
        .formula("mufu_busy_fraction", StatUnit::Fraction, "mufu_busy_cycles over the used sub-partitions' cycles",
                 [](const CorePipeStats& s, const StatContext& c) -> StatValue {
                   return busy_fraction(s.mufu_busy_cycles, c);
                 })
        .counter("cvt_busy_cycles", StatUnit::Cycles, "cycles the conversion pipes were taken",
                 &CorePipeStats::cvt_busy_cycles)
        .formula("cvt_busy_fraction", StatUnit::Fraction, "cvt_busy_cycles over the used sub-partitions' cycles",
                 [](const CorePipeStats& s, const StatContext& c) -> StatValue {
                   return busy_fraction(s.cvt_busy_cycles, c);
                 });
    return g;
  }();
  return group;
}

}  // namespace bwsim
