#include "bwsim/kernel/Simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/sm/Gpu.hpp"
#include "bwsim/hw/memory/MemorySystem.hpp"
#include "bwsim/hw/sm/Sm.hpp"

namespace bwsim {

// One launch in flight: the chip, the memory system, the resident clusters and the block
// scheduler that places each next cluster of the grid where it fits (waves).
struct Simulator::Launch {
  struct Resident {
    std::unique_ptr<Cta> cta;
    std::deque<Warp> warps;
    std::vector<Task> programs;
  };
  struct Group {
    std::unique_ptr<Cluster> cluster;
    std::vector<Resident> ctas;  // by rank
    Placement placement;
  };

  SimContext ctx;
  const LaunchConfig& launch;
  const WarpProgram& program;
  std::uint32_t cluster_size;
  std::uint32_t registers_per_thread;
  CtaFootprint footprint;
  Gpu gpu;
  std::vector<Group> groups;              // resident clusters, reused once retired
  // Retired clusters that race checks still queued on the race-checking thread may name: freed
  // once it has run every check posted before they retired.
  struct Retired {
    std::uint64_t posted;
    std::vector<std::unique_ptr<Cta>> ctas;
    std::unique_ptr<Cluster> cluster;
  };
  std::deque<Retired> retired;
  std::vector<std::uint32_t> free_groups;
  std::vector<Placement> wave;            // scratch: the clusters one dispatch starts
  std::vector<std::uint32_t> group_of;    // cluster id -> its entry in groups
  std::uint32_t next_cluster = 0;
  std::uint32_t finished_ctas = 0;
  Cycle last_finish = 0;
  std::vector<WarpSummary> warps;
  std::vector<Cycle> start_skew;  // per SM: its CTAs start this much late (schedule perturbation)

  // The units' counters now, per SM and summed, and the memory system's, into `r`.
  void count(RunResult& r) const {
    r.memory = ctx.memory.stats();
    for (std::uint32_t i = 0; i < gpu.sm_count(); ++i) {
      const Sm& sm = gpu.sm(i);
      r.tma_per_sm.push_back(sm.tma().stats());
      r.mma_per_sm.push_back(sm.mma().stats());
      r.wgmma_per_sm.push_back(sm.wgmma().stats());
      r.pipes_per_sm.push_back(sm.pipe_stats());
    }
    r.tma = TmaStats::declared().total(r.tma_per_sm);
    r.mma = MmaStats::declared().total(r.mma_per_sm);
    r.wgmma = WgmmaStats::declared().total(r.wgmma_per_sm);
    r.pipes = CorePipeStats::declared().total(r.pipes_per_sm);
  }
  // The chip's counters now.
  CounterSnapshot snapshot() const {
    RunResult now;
    now.cycles = ctx.now();
    count(now);
    return now.counters();
  }
  // Records a snapshot and schedules the next while anything else is pending (so it never keeps
  // a finished or deadlocked run alive).
  Cycle snapshot_every = 0;
  std::vector<CounterSnapshot> snapshots;
  static void on_snapshot(void* self, std::uint64_t) {
    auto& l = *static_cast<Launch*>(self);
    l.snapshots.push_back(l.snapshot());
    if (!l.ctx.engine.idle()) l.ctx.engine.schedule(l.ctx.now() + l.snapshot_every, &Launch::on_snapshot, &l);
  }

  Launch(const HardwareConfig& cfg, Mode mode, std::string_view kernel, GlobalMemory& gmem, MemorySystem& memory,
         Tracer* tracer, std::uint32_t trace_sms, const LaunchConfig& l, const WarpProgram& p)
      : ctx{Engine{}, cfg, mode, std::string(kernel), gmem, memory, tracer, trace_sms,
            std::vector<std::uint8_t>(tracer ? cfg.sm.count : 0)},
        launch(l),
        program(p),
        cluster_size(l.cluster.size()),
        registers_per_thread(l.registers_per_thread ? l.registers_per_thread
                                                    : std::min(256u, cfg.sm.registers / l.block_threads / 8 * 8)),
        footprint{l.dynamic_smem_bytes + cfg.sm.smem_reserved_per_cta, l.block_threads / 32,
                  registers_per_thread * l.block_threads},
        gpu(ctx, &Launch::on_cta_finished, this),
        group_of(l.grid_ctas / cluster_size) {}

  static void warp_done(void* wsp) {
    auto& ws = *static_cast<WarpState*>(wsp);
    ws.cta->warp_finished(ws);
  }

  // Starts as many of the grid's remaining clusters as fit now. The block scheduler picks where
  // (Gpu::place spreads them over TPCs and GPCs); cluster ids then go in SM order, first CTAs of
  // SMs before second ones, as on the H100 (h100_gemm_loads_tiles_private_l2_a_g66.csv: a 66-CTA
  // grid takes one SM of every TPC, consecutive CTAs in one GPC).
  void dispatch(Cycle at) {
    wave.clear();
    for (std::uint32_t placed = next_cluster; placed * cluster_size < launch.grid_ctas; ++placed) {
      wave.emplace_back();
      if (!gpu.place(footprint, cluster_size, wave.back())) {
        wave.pop_back();
        break;
      }
    }
    std::sort(wave.begin(), wave.end(), [](const Placement& a, const Placement& b) {
      return std::pair{a.slots[0], a.sms[0]} < std::pair{b.slots[0], b.sms[0]};
    });
    for (Placement& place : wave) {
      std::uint32_t gi;
      if (free_groups.empty()) {
        gi = static_cast<std::uint32_t>(groups.size());
        groups.emplace_back();
      } else {
        gi = free_groups.back();
        free_groups.pop_back();
      }
      start_cluster(gi, std::move(place), at);
    }
  }

  void start_cluster(std::uint32_t gi, Placement place, Cycle at) {
    Group& g = groups[gi];
    g.placement = std::move(place);
    g.ctas.resize(cluster_size);
    const std::uint32_t cluster_id = next_cluster++;
    group_of[cluster_id] = gi;
    g.cluster = std::make_unique<Cluster>(ctx, cluster_id, launch.cluster);
    for (std::uint32_t rank = 0; rank < cluster_size; ++rank) {
      const std::uint32_t sm = g.placement.sms[rank], slot = g.placement.slots[rank];
      Resident& r = g.ctas[rank];
      r.cta = std::make_unique<Cta>(ctx, gpu.sm(sm), *g.cluster, cluster_id * cluster_size + rank,
                                    launch.dynamic_smem_bytes, launch.block_threads, registers_per_thread, slot);
      g.cluster->add(*r.cta);
      r.warps.clear();
      r.programs.clear();
      ctx.trace_if_room(sm);
      Tracer* t = ctx.tracer_for(sm);
      for (std::uint32_t w = 0; w < r.cta->num_warps(); ++w) {
        WarpState& ws = r.cta->warp(w);
        r.warps.emplace_back(ws, *r.cta, launch.grid_ctas);
        if (t) t->thread_name(static_cast<int>(sm), static_cast<int>(ws.trace_tid), fmt::format("w{}", w));
        r.programs.push_back(program(r.warps.back()));
        if (!r.programs.back().valid()) throw InputError("the warp program returned no coroutine");
        r.programs.back().set_on_done(&Launch::warp_done, &ws);
        ws.handle = r.programs.back().handle();
      }
      if (t && !named_[sm]) {  // the SM's first CTA names its process (the CTA track shows later ones)
        named_[sm] = true;
        t->process_name(static_cast<int>(sm),
                        cluster_size > 1 ? fmt::format("SM {}: CTA {} (cluster {} rank {})", sm, r.cta->id(),
                                                       cluster_id, rank)
                                         : fmt::format("SM {}: CTA {}", sm, r.cta->id()));
        t->thread_name(static_cast<int>(sm), kTmaTrack, "TMA unit");
        t->thread_name(static_cast<int>(sm), kBarrierTrack, "mbarrier phases");
        t->thread_name(static_cast<int>(sm), kMmaTrack, "MMA pipe");
        t->thread_name(static_cast<int>(sm), kCtaTrack, "CTA");
        t->thread_name(static_cast<int>(sm), kTmemTrack, "tcgen05.ld/st path");
      }
      if (t) t->counter(static_cast<int>(sm), "SMEM bytes in use", at, smem_in_use(sm, +1));
    }
    for (std::uint32_t rank = 0; rank < cluster_size; ++rank)
      g.ctas[rank].cta->start(at + (start_skew.empty() ? 0 : start_skew[g.placement.sms[rank]]));
  }

  // Dynamic SMEM of the CTAs resident on `sm`, after one more (+1) or one fewer (-1).
  std::uint64_t smem_in_use(std::uint32_t sm, int change) {
    smem_on_[sm] += change * static_cast<std::int64_t>(launch.dynamic_smem_bytes);
    return static_cast<std::uint64_t>(smem_on_[sm]);
  }

  // Called inside the finishing CTA's last event. A cluster retires when all its CTAs have
  // finished (a peer may still touch an exited CTA's SMEM, which is reported), from a fresh
  // event, so no frame of a CTA is on the stack when it is destroyed.
  static void on_cta_finished(void* self, Cta& cta) {
    auto& l = *static_cast<Launch*>(self);
    if (!cta.cluster().finished()) return;
    Cycle at = l.ctx.now();
    for (std::uint32_t r = 0; r < cta.cluster().size(); ++r) at = std::max(at, cta.cluster().cta(r).finish_cycle());
    l.ctx.couple_at(Coupling::Launch, at);
    l.ctx.engine.schedule(at, &Launch::retire, self, l.group_of[cta.cluster().id()]);
  }

  static void retire(void* self, std::uint64_t group) {
    auto& l = *static_cast<Launch*>(self);
    Group& g = l.groups[group];
    for (Resident& r : g.ctas) {
      r.cta->check_tmem_released();
      r.cta->check_exit_stores();
      const Cta& cta = *r.cta;
      for (std::uint32_t w = 0; w < cta.num_warps(); ++w) {
        const WarpState& ws = cta.warp(w);
        WarpSummary s{cta.sm().index(), cta.id(), w, ws.role, ws.start, ws.finish, ws.instructions,
                      ws.activity_totals(), {}};
        for (const auto& [offset, cycles] : ws.barrier_wait.entries()) {
          const MBarrier* b = cta.find_barrier(offset);
          s.barrier_wait.emplace_back(b && !b->name.empty() ? b->name : fmt::format("smem {:#x}", offset), cycles);
        }
        l.warps.push_back(std::move(s));
      }
      l.last_finish = std::max(l.last_finish, cta.finish_cycle());
      ++l.finished_ctas;
      if (Tracer* t = l.ctx.tracer_for(cta.sm().index())) {
        const int pid = static_cast<int>(cta.sm().index());
        const Cycle start = cta.warp(0).start;
        t->span(pid, kCtaTrack,
                g.cluster->size() > 1
                    ? fmt::format("CTA {} (cluster {} rank {})", cta.id(), g.cluster->id(), cta.rank())
                    : fmt::format("CTA {}", cta.id()),
                start, cta.finish_cycle() - start);
        t->counter(pid, "SMEM bytes in use", cta.finish_cycle(), l.smem_in_use(cta.sm().index(), -1));
      }
    }
    RaceCheckThread* checker = l.ctx.race_thread;
    while (checker && !l.retired.empty() && checker->done_up_to(l.retired.front().posted)) l.retired.pop_front();
    if (checker) l.retired.push_back({checker->posted(), {}, std::move(g.cluster)});
    for (std::uint32_t rank = 0; rank < g.ctas.size(); ++rank) {
      Resident& r = g.ctas[rank];
      r.programs.clear();
      r.warps.clear();
      if (checker) l.retired.back().ctas.push_back(std::move(r.cta));
      r.cta.reset();
      l.gpu.release(g.placement.sms[rank], g.placement.slots[rank], l.footprint);
    }
    g.cluster.reset();
    l.free_groups.push_back(static_cast<std::uint32_t>(group));
    l.dispatch(l.ctx.now());
  }

  // When the run stalled: the engine's clock, or a later cycle a blocked warp's own clock reached.
  Cycle stall_cycle() const {
    Cycle at = ctx.now();
    for (const Group& g : groups)
      for (const Resident& r : g.ctas)
        if (r.cta && !r.cta->finished()) at = std::max(at, r.cta->latest_mbarrier_wait());
    return at;
  }

  std::string report() const {
    std::string out;
    for (const Group& g : groups)
      for (const Resident& r : g.ctas)
        if (r.cta && !r.cta->finished()) out += r.cta->wait_report();
    return out;
  }

  std::vector<bool> named_ = std::vector<bool>(ctx.config.sm.count);
  std::vector<std::int64_t> smem_on_ = std::vector<std::int64_t>(ctx.config.sm.count);
};

Simulator::Simulator(const HardwareConfig& config, SimOptions options)
    : config_(config),
      options_(std::move(options)),
      gmem_(options_.mode == Mode::Functional, config.l2.page_bytes),
      memory_(std::make_unique<MemorySystem>(config)) {}

Simulator::~Simulator() = default;

RunResult Simulator::launch(std::string_view kernel, const LaunchConfig& lc, const WarpProgram& program) {
  if (lc.grid_ctas == 0) throw InputError("launch: the grid has no CTAs");
  if (lc.block_threads == 0 || lc.block_threads % 32 != 0 || lc.block_threads > config_.sm.max_threads_per_cta)
    throw InputError(fmt::format("launch: {} threads per CTA; must be a multiple of 32 in 32..{} (sm.max_threads_per_cta)",
                                 lc.block_threads, config_.sm.max_threads_per_cta));
  if (lc.block_threads / 32 > config_.sm.max_warps)
    throw InputError(fmt::format("launch: {} warps per CTA exceed the SM's {} resident warps (sm.max_warps)",
                                 lc.block_threads / 32, config_.sm.max_warps));
  if (lc.registers_per_thread &&
      (lc.registers_per_thread % 8 != 0 || lc.registers_per_thread > 256 ||
       lc.registers_per_thread * lc.block_threads > config_.sm.registers))
    throw InputError(fmt::format("launch: {} registers per thread x {} threads: a multiple of 8 up to 256 that fits the "
                                 "SM's {} registers (sm.registers)",
                                 lc.registers_per_thread, lc.block_threads, config_.sm.registers));
  const std::uint32_t cs = lc.cluster.size();
  if (cs == 0 || cs > config_.cluster.max_ctas)
    throw InputError(fmt::format("launch: a cluster of {}x{}x{} = {} CTAs; the {} config allows 1..{} (cluster.max_ctas)",
                                 lc.cluster.x, lc.cluster.y, lc.cluster.z, cs, config_.name, config_.cluster.max_ctas));
  if (cs > config_.cluster.max_ctas_portable && !lc.non_portable_cluster)
    throw InputError(fmt::format("launch: a cluster of {} CTAs exceeds the portable limit of {}; opt in with the "
                                 "non-portable cluster size attribute (--non-portable-cluster)",
                                 cs, config_.cluster.max_ctas_portable));
  if (lc.grid_ctas % cs != 0)
    throw InputError(fmt::format("launch: the grid of {} CTAs is not a multiple of the cluster size {}", lc.grid_ctas, cs));
  if (lc.dynamic_smem_bytes > config_.sm.max_smem_per_cta)
    throw InputError(fmt::format("launch: SMEM over capacity: {} bytes of dynamic shared memory requested, the {} config "
                                 "allows {} per CTA (sm.max_smem_per_cta)",
                                 lc.dynamic_smem_bytes, config_.name, config_.sm.max_smem_per_cta));

  std::unique_ptr<Tracer> tracer;
  if (!options_.trace_path.empty())
    tracer = std::make_unique<Tracer>(options_.trace_path, config_.clock_ghz, options_.trace_filter);
  const auto wall_start = std::chrono::steady_clock::now();
  memory_->begin_launch(tracer.get(), static_cast<int>(config_.sm.count));
  struct EndLaunch {  // also when the launch throws: the memory system lets go of the tracer
    MemorySystem& memory;
    ~EndLaunch() { memory.end_launch(); }
  } end_launch{*memory_};
  Launch l(config_, options_.mode, kernel, gmem_, *memory_, tracer.get(), options_.trace_sms, lc, program);
  std::vector<PhaseFlip> flips;
  if (options_.record_phase_flips) l.ctx.phase_flips = &flips;
  l.ctx.check_races = options_.check_races;
  // Declared after the launch, so destroyed (joined) before the CTAs its checks name.
  std::optional<RaceCheckThread> race_thread;
  if (options_.check_races && options_.race_check_thread) l.ctx.race_thread = &race_thread.emplace();
  // Waits for the thread to run every check posted, then whether one found a race: then the run
  // is to be repeated with inline checks; an error of the simulation's own is reported only when
  // every check posted before it passed.
  const auto drained_with_race = [&] { return race_thread && race_thread->drain(); };
  CrossSmCensus census;
  if (options_.cross_sm_census) l.ctx.cross_sm = &census;
  // Each launch draws its own schedule (a stand-in, E, for what makes silicon's back-to-back
  // launches differ): the first from perturb_seed, launch i from perturb_seed mixed with i.
  std::uint64_t launch_seed = options_.perturb_seed;
  if (launch_seed && launches_) {
    std::uint64_t state = launch_seed ^ (launches_ * 0x9e3779b97f4a7c15ull);
    launch_seed = splitmix64(state) | 1;
  }
  ++launches_;
  if (launch_seed) {
    l.ctx.engine.shuffle_ties(launch_seed);
    std::uint64_t x = launch_seed;
    for (std::uint32_t sm = 0; sm < config_.sm.count; ++sm) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      l.start_skew.push_back(options_.perturb_sm_skew ? (x >> 33) % (options_.perturb_sm_skew + 1) : 0);
    }
  }

  const std::string why = l.gpu.never_fits(l.footprint, cs);
  if (!why.empty()) throw InputError(fmt::format("launch: the grid can never run: {}", why));
  bool drained = false;
  try {
    l.dispatch(config_.launch.latency);
    struct ProgressSink {
      const Launch& launch;
      const SimOptions& options;
      static void report(void* self) {
        auto& s = *static_cast<ProgressSink*>(self);
        // A race found on the checking thread ends the run here, between two events (a post does
        // not throw), so that a run gone wrong does not simulate on to its end or its watchdog.
        if (s.launch.ctx.race_thread && s.launch.ctx.race_thread->failed()) throw RaceCheckDeferred{};
        if (!s.options.progress) return;
        Progress p{s.launch.ctx.now(), s.launch.ctx.engine.events_processed(), s.launch.finished_ctas,
                   s.launch.launch.grid_ctas, 0};
        for (std::uint32_t i = 0; i < s.launch.gpu.sm_count(); ++i) p.mmas += s.launch.gpu.sm(i).mma().stats().mmas;
        s.options.progress(p);
      }
    } sink{l, options_};
    if (options_.progress || l.ctx.race_thread) l.ctx.engine.set_progress(&ProgressSink::report, &sink);
    if (options_.snapshot_cycles) {
      l.snapshot_every = options_.snapshot_cycles;
      l.snapshots.push_back(l.snapshot());  // the baseline (counters can carry earlier launches' memory traffic)
      l.ctx.engine.schedule(l.ctx.now() + l.snapshot_every, &Launch::on_snapshot, &l);
    }
    drained = l.ctx.engine.run(options_.watchdog_cycles);
  } catch (...) {
    if (drained_with_race()) throw RaceCheckDeferred{};
    throw;
  }
  if (drained_with_race()) throw RaceCheckDeferred{};
  const SimLocation at{std::string(kernel), -1, -1, "run", l.ctx.now()};
  if (!drained)
    throw WatchdogError(at, fmt::format("no completion after {} cycles (the watchdog limit); state of the resident CTAs:\n{}",
                                        options_.watchdog_cycles, l.report()));
  if (l.finished_ctas != lc.grid_ctas)
    throw DeadlockError({at.kernel, -1, -1, "run", l.stall_cycle()}, fmt::format("{} of {} CTAs never finished; every warp still running is blocked:\n{}",
                                        lc.grid_ctas - l.finished_ctas, lc.grid_ctas, l.report()));

  RunResult r;
  r.cycles = l.last_finish;
  r.events = l.ctx.engine.events_processed();
  r.sms_used = l.gpu.sms_used();
  for (std::uint32_t sm = 0; sm < l.ctx.traced.size(); ++sm)
    if (l.ctx.traced[sm]) r.traced_sms.push_back(sm);
  r.ctas = lc.grid_ctas;
  r.clock_ghz = config_.clock_ghz;
  l.count(r);
  r.snapshots = std::move(l.snapshots);
  while (r.snapshots.size() > 1 && r.snapshots.back().cycle >= r.cycles) r.snapshots.pop_back();
  r.snapshots.push_back(r.counters());
  r.warps = std::move(l.warps);
  r.phase_flips = std::move(flips);
  if (options_.cross_sm_census) r.cross_sm = census;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace bwsim
