#pragma once
// The launch API: GMEM buffers and tensor maps on the host side, a grid of CTAs dispatched
// onto the SMs of the config (as many resident per SM as its limits allow, later CTAs in
// waves; clusters inside one GPC), and the result.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Task.hpp"
#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/CorePipes.hpp"
#include "bwsim/hw/sm/SimContext.hpp"
#include "bwsim/hw/tensor/sm100/MmaPipe.hpp"
#include "bwsim/hw/memory/TmaUnit.hpp"
#include "bwsim/hw/tensor/sm90/WgmmaPipe.hpp"
#include "bwsim/kernel/Warp.hpp"

namespace bwsim {

struct LaunchConfig {
  std::uint32_t grid_ctas = 1;        // a multiple of the cluster size
  std::uint32_t block_threads = 128;  // a multiple of 32
  std::uint32_t dynamic_smem_bytes = 0;
  // CTAs cta_id / size form cluster cta_id / size, rank cta_id % size (x fastest). A cluster runs
  // on cluster.size() SMs of one GPC (ranks 2i, 2i+1 on one TPC) and retires as a whole.
  // Registers per thread each warp starts with (what the compiler allocated); 0: the most that
  // fits the SM's pool, in multiples of 8, at most 256.
  std::uint32_t registers_per_thread = 0;
  ClusterShape cluster{};
  bool non_portable_cluster = false;  // cudaFuncAttributeNonPortableClusterSizeAllowed
};

struct Progress {
  Cycle cycle = 0;
  std::uint64_t events = 0;
  std::uint32_t ctas_done = 0, ctas = 0;
  std::uint64_t mmas = 0;  // tcgen05.mma issued so far
};

struct SimOptions {
  Mode mode = Mode::Functional;
  std::string trace_path;           // empty: no trace
  std::uint32_t trace_sms = 4;      // trace only the first SMs to get CTAs (a full chip's trace is huge)
  TraceFilter trace_filter{};       // kinds and cycle window kept
  Cycle watchdog_cycles = 10'000'000'000ull;  // a run longer than this is reported as a livelock
  bool record_phase_flips = false;  // fill RunResult::phase_flips (regression tests of barrier logic)
  bool check_races = true;          // async race detection (check/RaceChecker); off for speed
  // The race checks on a second host thread (check/RaceCheckThread), beside the simulation. A race
  // found there makes launch() throw RaceCheckDeferred: run again without it to have the error.
  bool race_check_thread = false;
  bool cross_sm_census = false;     // fill RunResult::cross_sm (docs/parallel-simulation.md)
  // Every this many cycles, the chip's counters are recorded (RunResult::snapshots: the power
  // model's windows); 0: only at the end.
  Cycle snapshot_cycles = 0;
  // Called now and then during a long run (every 2^18 events) with the progress so far.
  std::function<void(const Progress&)> progress;
  // Schedule perturbation (check/Perturbation.hpp): events of one cycle in an order drawn from
  // `perturb_seed` instead of issue order, and each SM's CTAs starting up to `perturb_sm_skew`
  // cycles late (drawn per SM); a Simulator's later launches draw from the seed mixed with their
  // index. Off when perturb_seed is 0.
  std::uint64_t perturb_seed = 0;
  Cycle perturb_sm_skew = 0;
};

struct WarpSummary {
  std::uint32_t sm = 0, cta = 0, warp = 0;
  std::string role;
  Cycle start = 0, finish = 0;
  std::uint64_t instructions = 0;
  // Cycles per activity (they add up to finish - start) and, of MbarrierWait, per barrier label.
  std::array<Cycle, static_cast<std::size_t>(Activity::kCount)> activity{};
  std::vector<std::pair<std::string, Cycle>> barrier_wait;
  Cycle cycles(Activity a) const { return activity[static_cast<std::size_t>(a)]; }
};

// The chip's counters summed over its SMs at one cycle of a run (what the power model reads).
struct CounterSnapshot {
  Cycle cycle = 0;
  TmaStats tma;
  MmaStats mma;
  WgmmaStats wgmma;
  CorePipeStats pipes;
  MemoryStats memory;
};

// What a run leaves: its length, the units' counters (declared in kernel/StatRegistry, which every
// output renders from), the warps' stall accounting.
struct RunResult {
  Cycle cycles = 0;               // launch to last CTA finished
  std::uint64_t events = 0;       // engine events processed
  double wall_seconds = 0;        // host time the simulation took
  std::uint32_t sms_used = 0;
  std::vector<std::uint32_t> traced_sms;  // the SMs the trace covers (the first to get CTAs)
  std::uint32_t ctas = 0;
  double clock_ghz = 0;           // the config's SM clock (for rates)
  // Per SM (every SM of the chip, index = SM), and their sums.
  std::vector<TmaStats> tma_per_sm;
  std::vector<MmaStats> mma_per_sm;
  std::vector<WgmmaStats> wgmma_per_sm;  // SM90 configs
  std::vector<CorePipeStats> pipes_per_sm;
  TmaStats tma;
  MmaStats mma;
  WgmmaStats wgmma;
  CorePipeStats pipes;
  MemoryStats memory;             // L2 and HBM traffic
  std::vector<WarpSummary> warps;
  std::vector<PhaseFlip> phase_flips;  // every mbarrier phase completion, in order (record_phase_flips)
  std::optional<CrossSmCensus> cross_sm;  // how the events coupled the SMs (cross_sm_census)
  // The counters every SimOptions::snapshot_cycles, then at the end (counted when issued: an
  // MMA's FLOPs and a block's pipe cycles fall in the window it started in).
  std::vector<CounterSnapshot> snapshots;
  // The summed counters at the run's end.
  CounterSnapshot counters() const { return {cycles, tma, mma, wgmma, pipes, memory}; }
  // What the statistics' formulas see: the run's length over the SMs used.
  StatContext context() const { return StatContext{cycles, sms_used, clock_ghz}; }
  // Fraction of (cycles x SMs used) the TMA units spent streaming.
  double tma_busy_fraction() const { return context().busy_fraction(tma.busy_cycles); }
  // Fraction of (cycles x SMs used) the tensor pipes (tcgen05 and wgmma) were occupied.
  double mma_busy_fraction() const { return context().busy_fraction(mma.busy_cycles + wgmma.busy_cycles); }
};

// The first warp's start and the last warp's finish of a launch: the span the hardware programs
// bracket with %globaltimer (the first CTA's start, the last CTA's end).
struct WarpSpan {
  Cycle begin = std::numeric_limits<Cycle>::max(), end = 0;
};
inline WarpSpan warp_span(const RunResult& r) {
  WarpSpan span;
  for (const WarpSummary& s : r.warps) {
    span.begin = std::min(span.begin, s.start);
    span.end = std::max(span.end, s.finish);
  }
  return span;
}

// A warp program: called once per warp of every CTA; branch on w.warp_idx() for roles.
using WarpProgram = std::function<Task(Warp&)>;

class Simulator {
 public:
  Simulator(const HardwareConfig& config, SimOptions options);
  // The simulator keeps a reference to its config: a temporary would dangle.
  Simulator(HardwareConfig&& config, SimOptions options) = delete;
  ~Simulator();

  const HardwareConfig& config() const { return config_; }
  Mode mode() const { return options_.mode; }
  GlobalMemory& gmem() { return gmem_; }

  // Runs the kernel to completion. Launches of one Simulator run one after another on the same
  // chip: the L2 holds what earlier launches left in it. Throws InputError for a bad launch,
  // SimError (misuse, deadlock, watchdog) for a failing kernel.
  RunResult launch(std::string_view kernel, const LaunchConfig& launch, const WarpProgram& program);

 private:
  struct Launch;
  const HardwareConfig& config_;
  SimOptions options_;
  GlobalMemory gmem_;
  std::unique_ptr<MemorySystem> memory_;  // the L2's contents persist from launch to launch
  std::uint64_t launches_ = 0;            // launches so far (each draws its own perturbed schedule)
};

}  // namespace bwsim
