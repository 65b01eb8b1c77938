#pragma once
// The board's power and the clock its power limit allows. A kernel's energy (what its run
// counted: tensor FLOP, CUDA-core instructions per pipe, L2, HBM and TMA traffic) costs energy
// per event (config `power`); the SM's own units cost less at a lower clock (their voltage falls
// with it: energy_scale), the memory side does not. Cycles do not depend on the clock here: a
// kernel's time at a clock is its cycles / the clock.
//
// The clock: a kernel with tensor work starts at power.tensor_clock_ghz (the most the SM gives
// while a tensor pipe works), others at power.max_clock_ghz. Run back to back (`sustain`), the
// config's clock controller (power/ClockController) sets each period's clock from the last
// period's power; with "limit_step" the steady state is the highest step within the limit.
// Inside one run, the power of each window between counter snapshots (`window_power`) gives its
// peak and its profile.
#include <cstdint>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"

namespace bwsim {

struct RunResult;
struct CounterSnapshot;

// A kernel's energy per cycle of its run, split by whether it scales with the SM's voltage.
struct KernelEnergy {
  double sm_pj_per_cycle = 0;      // tensor pipes and CUDA-core pipes, at the maximum clock's voltage
  double memory_pj_per_cycle = 0;  // L2 <-> SM, HBM <-> L2, TMA operations
  bool tensor = false;             // any tensor-pipe work (the start clock is the tensor clock)
  std::uint64_t cycles = 0;        // the kernel's cycles
};

// The energy of what `run` counted, from the config's power figures.
KernelEnergy energy_of(const RunResult& run, const HardwareConfig& config);
// The same for the stretch between two snapshots of one run's counters (energy is linear in them).
KernelEnergy energy_between(const CounterSnapshot& from, const CounterSnapshot& to, const HardwareConfig& config);

// The board's power in each window between a run's snapshots (RunResult::snapshots) at `ghz` (the
// clock the run starts at): what a power meter reading faster than the kernel would show.
struct WindowPower {
  std::uint64_t begin = 0, end = 0;  // cycles
  double power_w = 0;
};
std::vector<WindowPower> window_power(const RunResult& run, const HardwareConfig& config, double ghz);

class PowerModel {
 public:
  explicit PowerModel(const HardwareConfig::Power& p) : p_(p) {}
  // Dynamic energy factor of the SM's units at `ghz` (energy_scale, interpolated).
  double energy_scale(double ghz) const;
  // The board's power (W) while the kernel runs at `ghz`.
  double power_w(const KernelEnergy& a, double ghz) const;
  // The clock a kernel starts at (before the controller has acted).
  double start_clock_ghz(const KernelEnergy& a) const { return a.tensor ? p_.tensor_clock_ghz : p_.max_clock_ghz; }

 private:
  const HardwareConfig::Power& p_;
};

// One controller period of a sustained run.
struct ClockSample {
  double t_s, clock_ghz, power_w;
};

struct SustainedRun {
  double seconds = 0;               // wall time modeled
  double kernels = 0;               // kernels completed (fractional)
  // Steady state: over the second half of the run.
  double clock_ghz = 0;             // mean clock
  double power_w = 0;               // mean board power
  double kernel_seconds = 0;        // wall time per kernel
  double peak_power_w = 0;          // the highest period power of the whole run
  double seconds_at_start_clock = 0;  // periods at the start clock (the limit not acting)
  double seconds_limited = 0;         // periods below it
  std::vector<ClockSample> trace;   // every period
};

// The kernel run back to back for `seconds` of wall time from a cold start (the start clock).
SustainedRun sustain(const KernelEnergy& a, const HardwareConfig::Power& p, double seconds);

}  // namespace bwsim
