#pragma once
// Declared statistics, as gem5 and SST declare theirs: a unit names each of its counters once, next
// to the plain field its hot path adds to, with a unit and a description; rates and fractions are
// formulas over those counters and the run's length. Nothing is looked up while a simulation runs:
// the declarations read the fields once it is over, and every output (the summary, --json,
// --stats, the HTML report, docs/stats.md) renders from them (kernel/StatRegistry).
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

enum class StatUnit : std::uint8_t {
  Count, Bytes, Cycles, Flop, Fraction, GBytesPerSecond, TflopsPerSecond, BytesPerCycle, Seconds, Microseconds,
  EventsPerSecond
};
const char* unit_name(StatUnit unit);  // "count", "bytes", "GB/s", ...

// A value: counters are integers; FLOP, rates and fractions are real (the JSON keeps the kind).
using StatValue = std::variant<std::uint64_t, double>;
double as_double(const StatValue& v);
bool is_zero(const StatValue& v);
// The value for a reader: "4.00 MiB", "52.1%", "617.329 us", "1234".
std::string format_value(StatUnit unit, const StatValue& v);

// What a formula sees besides its unit's counters.
struct StatContext {
  Cycle cycles = 0;             // the run's length
  std::uint32_t instances = 1;  // units whose counters were summed (the SMs used); 1 for one unit
  double clock_ghz = 0;         // the config's SM clock
  double seconds() const { return static_cast<double>(cycles) / (clock_ghz * 1e9); }
  // `busy` unit cycles as a fraction of the instances' cycles.
  double busy_fraction(Cycle busy) const {
    return cycles && instances ? static_cast<double>(busy) / (static_cast<double>(cycles) * instances) : 0.0;
  }
  // `amount` per second of simulated time (at the config's clock), in units of 10^`scale`.
  double per_second(double amount, double scale) const {
    return seconds() > 0 ? amount / seconds() / scale : 0.0;
  }
};

// The stall table's critical-path line shows a unit's busy fraction under `label`; a memory link
// also gives `bound` ("L2-bandwidth") to the run when it is busy over 90% of it.
struct CriticalPath {
  const char* label = nullptr;
  const char* bound = nullptr;
};

struct StatInfo {
  std::string name;  // "<group>.<stat>"; a figure of the whole run has no group
  StatUnit unit = StatUnit::Count;
  std::string description;
  bool formula = false;    // derived from other statistics
  bool per_sm = false;     // kept per SM as well as summed over the SMs
  bool host_time = false;  // measures the host running the simulation: differs from run to run
  bool headline = false;   // also a column of `bwsim sweep` tables
  CriticalPath critical{};
  std::string group() const;       // the part before the first dot ("" for none)
  std::string short_name() const;  // the part after it
};

// One statistic at the end of a run.
struct StatSample {
  const StatInfo* info = nullptr;
  StatValue value;                // over the whole chip (the SMs' sum for a per-SM counter)
  std::vector<StatValue> per_sm;  // when info->per_sm
};

// One unit's declarations over its counter struct. Counters name a field (any integer or floating
// type); formulas compute from the struct and the context.
template <class Counters>
class StatGroup {
 public:
  using Formula = StatValue (*)(const Counters& counters, const StatContext& context);
  struct Stat {
    StatInfo info;
    std::function<StatValue(const Counters&)> field;           // a counter's value
    std::function<void(Counters&, const Counters&)> add_into;  // a counter: into += from
    Formula formula = nullptr;
    StatValue value(const Counters& c, const StatContext& context) const {
      return formula ? formula(c, context) : field(c);
    }
  };

  // `group`: the prefix of every name; empty for the run's own figures.
  explicit StatGroup(std::string group) : group_(std::move(group)) {}

  template <class Field>
  StatGroup& counter(const char* name, StatUnit unit, const char* description, Field Counters::*field) {
    Stat s{info(name, unit, description)};
    s.field = [field](const Counters& c) -> StatValue {
      if constexpr (std::is_floating_point_v<Field>) return static_cast<double>(c.*field);
      else return static_cast<std::uint64_t>(c.*field);
    };
    s.add_into = [field](Counters& into, const Counters& from) { into.*field += from.*field; };
    stats_.push_back(std::move(s));
    return *this;
  }
  StatGroup& formula(const char* name, StatUnit unit, const char* description, Formula f, CriticalPath critical = {}) {
    Stat s{info(name, unit, description)};
    s.info.formula = true;
    s.info.critical = critical;
    s.formula = f;
    stats_.push_back(std::move(s));
    return *this;
  }
  // Marks the last declared statistic: host-time dependent, or a sweep-table column.
  StatGroup& host_time() {
    stats_.back().info.host_time = true;
    return *this;
  }
  StatGroup& headline() {
    stats_.back().info.headline = true;
    return *this;
  }

  // The counters of several instances (the SMs) added up, every declared counter.
  Counters total(const std::vector<Counters>& instances) const {
    Counters sum{};
    for (const Counters& one : instances)
      for (const Stat& s : stats_)
        if (s.add_into) s.add_into(sum, one);
    return sum;
  }
  const std::vector<Stat>& stats() const { return stats_; }

 private:
  StatInfo info(const char* name, StatUnit unit, const char* description) const {
    return StatInfo{group_.empty() ? name : group_ + "." + name, unit, description};
  }
  std::string group_;
  std::vector<Stat> stats_;
};

}  // namespace bwsim
