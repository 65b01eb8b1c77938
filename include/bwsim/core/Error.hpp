#pragma once
// One error hierarchy. Simulation errors carry where they happened (kernel, CTA, warp,
// operation, cycle) and a one-line hint; input errors carry what was wrong with the input.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

// Bad input: config files, kernel arguments, launch parameters, tensor maps, CLI flags.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A config file that is malformed, incomplete or out of range; the message names the key path.
class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

// Where in the simulated machine an error happened.
struct SimLocation {
  std::string kernel;
  int cta = -1;
  int warp = -1;  // -1: a hardware unit, not a warp
  std::string op;
  Cycle cycle = 0;
  int cluster = -1, cluster_rank = -1;  // set for CTAs of clusters larger than 1
};

// A program misuse or hang detected by the simulator.
class SimError : public std::runtime_error {
 public:
  SimError(std::string kind, SimLocation where, std::string what, std::string hint);
  const std::string& kind() const { return kind_; }
  const SimLocation& where() const { return where_; }
  const std::string& detail() const { return detail_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string kind_;
  SimLocation where_;
  std::string detail_;
  std::string hint_;
};

// The misuse rules of reference/ptx-semantics.md ("Errors a simulator must detect").
enum class Rule : std::uint8_t {
  OverArrival,
  TxOutOfRange,
  TxUnderflow,
  BarrierUninitialized,
  BarrierInvalidated,
  BarrierReinitInUse,
  BarrierBadInit,
  BarrierMisaligned,
  BarrierClobbered,
  StaleParity,
  SmemOutOfBounds,
  SmemMisaligned,
  TmaInvalid,
  NamedBarrierMisuse,
  TmemOutOfAllocation,
  TmemLaneQuadrant,
  TmemAllocMisuse,
  TmemAccessInvalid,
  MmaInvalid,
  ClusterRankOutOfRange,
  CtaPairMisuse,
  ClusterBarrierMisuse,
  ClusterPeerExited,
  RaceStageReuse,
  RaceEarlyRead,
  RaceMissingProxyFence,
  RaceEarlyAccumulatorRead,
  RaceAccumulatorOverwrite,
  SetmaxnregMisuse,
  WgmmaMisuse,
  ExitWithPendingStore,
};
const char* rule_name(Rule r);

class MisuseError : public SimError {
 public:
  MisuseError(Rule rule, SimLocation where, std::string what, std::string hint);
  Rule rule() const { return rule_; }

 private:
  Rule rule_;
};

// Every warp blocked and no event pending; the message is the full wait/barrier report.
class DeadlockError : public SimError {
 public:
  DeadlockError(SimLocation where, std::string report);
};

// The watchdog's simulated-cycle limit was reached (livelock or a run far longer than expected).
class WatchdogError : public SimError {
 public:
  WatchdogError(SimLocation where, std::string report);
};

}  // namespace bwsim
