#pragma once
// Every statistic of a run, in one list: the run's own figures (cycles, events, ...), then the
// units' declarations (TmaStats, MemoryStats, MmaStats, WgmmaStats, CorePipeStats) bound to where
// a RunResult keeps their counters, then the figures that combine units. Outputs render from
// here (report/StatsOutput); docs/stats.md is its table.
#include <functional>
#include <vector>

#include "bwsim/core/Stats.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {

class StatRegistry {
 public:
  struct Entry {
    StatInfo info;
    std::function<StatValue(const RunResult&)> value;
    std::function<std::vector<StatValue>(const RunResult&)> per_sm;  // set when info.per_sm
  };
  StatRegistry();
  const std::vector<Entry>& entries() const { return entries_; }
  // Every statistic's value for `run`, in declaration order.
  std::vector<StatSample> sample(const RunResult& run) const;

 private:
  template <class Counters>
  void add_per_sm(const StatGroup<Counters>& group, Counters RunResult::*total,
                  std::vector<Counters> RunResult::*per_sm);
  template <class Counters>
  void add_chip(const StatGroup<Counters>& group, Counters RunResult::*counters);
  void add_run(const StatGroup<RunResult>& group);
  std::vector<Entry> entries_;
};

const StatRegistry& stat_registry();
// The busy fractions with a critical-path label (StatInfo::critical), in declaration order.
std::vector<StatSample> critical_path(const RunResult& run);

}  // namespace bwsim
