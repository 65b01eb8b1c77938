#include "bwsim/kernel/StatRegistry.hpp"

namespace bwsim {
namespace {

// The run's own figures: its length and size, and the host's time.
StatGroup<RunResult> run_figures() {
  StatGroup<RunResult> g("");
  g.counter("cycles", StatUnit::Cycles, "launch to the last CTA finished", &RunResult::cycles)
      .headline()
      .formula("time_us", StatUnit::Microseconds, "cycles at the config's clock",
               [](const RunResult& r, const StatContext&) -> StatValue {
                 return r.cycles ? static_cast<double>(r.cycles) / (r.clock_ghz * 1e3) : 0.0;  // no clock without a run
               })
      .headline()
      .counter("events", StatUnit::Count, "engine events processed", &RunResult::events)
      .counter("wall_seconds", StatUnit::Seconds, "host time the simulation took", &RunResult::wall_seconds)
      .host_time()
      .headline()
      .formula("events_per_second", StatUnit::EventsPerSecond, "events over wall_seconds",
               [](const RunResult& r, const StatContext&) -> StatValue {
                 return r.wall_seconds > 0 ? static_cast<double>(r.events) / r.wall_seconds : 0.0;
               })
      .host_time()
      .counter("sms_used", StatUnit::Count, "SMs that ran at least one CTA", &RunResult::sms_used)
      .counter("ctas", StatUnit::Count, "CTAs of the grid", &RunResult::ctas);
  return g;
}

// Figures that combine units, declared where the run sees them all.
StatGroup<RunResult> chip_figures() {
  StatGroup<RunResult> g("");
  g.formula("bytes_per_cycle", StatUnit::BytesPerCycle, "TMA bytes loaded and stored per cycle of the run",
            [](const RunResult& r, const StatContext&) -> StatValue {
              return r.cycles ? static_cast<double>(r.tma.load_bytes + r.tma.store_bytes) / static_cast<double>(r.cycles)
                              : 0.0;
            })
      // The key predates wgmma: it is the SM's tensor pipe, tcgen05 and wgmma together.
      .formula("mma.busy_fraction", StatUnit::Fraction,
               "cycles the tensor pipes (tcgen05 and wgmma) were occupied over the used SMs' cycles",
               [](const RunResult& r, const StatContext&) -> StatValue { return r.mma_busy_fraction(); },
               {"tensor pipe"});
  return g;
}

}  // namespace

template <class Counters>
void StatRegistry::add_per_sm(const StatGroup<Counters>& group, Counters RunResult::*total,
                              std::vector<Counters> RunResult::*per_sm) {
  for (const auto& s : group.stats()) {
    Entry e{s.info};
    e.info.per_sm = true;
    e.value = [&s, total](const RunResult& r) { return s.value(r.*total, r.context()); };
    e.per_sm = [&s, per_sm](const RunResult& r) {
      StatContext one = r.context();  // a single SM's formula: its own counters over its cycles
      one.instances = 1;
      std::vector<StatValue> values;
      for (const Counters& c : r.*per_sm) values.push_back(s.value(c, one));
      return values;
    };
    entries_.push_back(std::move(e));
  }
}

template <class Counters>
void StatRegistry::add_chip(const StatGroup<Counters>& group, Counters RunResult::*counters) {
  for (const auto& s : group.stats()) {
    Entry e{s.info};
    e.value = [&s, counters](const RunResult& r) {
      StatContext chip = r.context();
      chip.instances = 1;
      return s.value(r.*counters, chip);
    };
    entries_.push_back(std::move(e));
  }
}

void StatRegistry::add_run(const StatGroup<RunResult>& group) {
  for (const auto& s : group.stats())
    entries_.push_back(Entry{s.info, [&s](const RunResult& r) { return s.value(r, r.context()); }});
}

StatRegistry::StatRegistry() {
  static const StatGroup<RunResult> run = run_figures(), chip = chip_figures();
  add_run(run);
  add_per_sm(TmaStats::declared(), &RunResult::tma, &RunResult::tma_per_sm);
  add_chip(MemoryStats::declared(), &RunResult::memory);
  add_per_sm(MmaStats::declared(), &RunResult::mma, &RunResult::mma_per_sm);
  add_per_sm(WgmmaStats::declared(), &RunResult::wgmma, &RunResult::wgmma_per_sm);
  add_per_sm(CorePipeStats::declared(), &RunResult::pipes, &RunResult::pipes_per_sm);
  add_run(chip);
}

std::vector<StatSample> StatRegistry::sample(const RunResult& run) const {
  std::vector<StatSample> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(StatSample{&e.info, e.value(run), e.per_sm ? e.per_sm(run) : std::vector<StatValue>{}});
  return out;
}

const StatRegistry& stat_registry() {
  static const StatRegistry registry;
  return registry;
}

std::vector<StatSample> critical_path(const RunResult& run) {
  std::vector<StatSample> out;
  for (const StatRegistry::Entry& e : stat_registry().entries())
    if (e.info.critical.label) out.push_back(StatSample{&e.info, e.value(run), {}});
  return out;
}

}  // namespace bwsim
