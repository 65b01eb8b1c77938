#include "bwsim/kernel/Simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>

#include "bwsim/core/Error.hpp"
#include "bwsim/hw/Cta.hpp"
#include "bwsim/hw/Sm.hpp"

namespace bwsim {

// One launch in flight: the SMs, the resident clusters and the dispatcher for waves. SMs form
// groups of cluster-size consecutive SMs; each group runs one cluster at a time.
struct Simulator::Launch {
  struct Resident {
    std::unique_ptr<Cta> cta;
    std::deque<Warp> warps;
    std::vector<Task> programs;
  };
  struct Group {
    std::unique_ptr<Cluster> cluster;
    std::vector<Resident> ctas;  // by rank
  };

  SimContext ctx;
  const LaunchConfig& launch;
  const WarpProgram& program;
  std::uint32_t cluster_size;
  std::uint32_t registers_per_thread;
  std::deque<Sm> sms;
  std::vector<Group> groups;
  std::uint32_t next_cluster = 0;
  std::uint32_t finished_ctas = 0;
  Cycle last_finish = 0;
  std::vector<WarpSummary> warps;

  Launch(const HardwareConfig& cfg, Mode mode, std::string_view kernel, GlobalMemory& gmem, Tracer* tracer,
         std::uint32_t trace_sms, const LaunchConfig& l, const WarpProgram& p)
      : ctx{Engine{}, cfg, mode, std::string(kernel), gmem, tracer, trace_sms},
        launch(l),
        program(p),
        cluster_size(l.cluster.size()),
        registers_per_thread(l.registers_per_thread ? l.registers_per_thread
                                                    : std::min(256u, cfg.sm.registers / l.block_threads / 8 * 8)) {
    const std::uint32_t n = std::min(cfg.sm.count / cluster_size, l.grid_ctas / cluster_size);
    for (std::uint32_t i = 0; i < n * cluster_size; ++i) {
      sms.emplace_back(ctx, i);
      sms.back().set_on_cta_finished(&Launch::on_cta_finished, this);
    }
    groups.resize(n);
    for (Group& g : groups) g.ctas.resize(cluster_size);
  }

  static void warp_done(void* wsp) {
    auto& ws = *static_cast<WarpState*>(wsp);
    ws.cta->warp_finished(ws);
  }

  void dispatch(std::uint32_t group, Cycle at) {
    if (next_cluster * cluster_size >= launch.grid_ctas) return;
    Group& g = groups[group];
    const std::uint32_t cluster_id = next_cluster++;
    g.cluster = std::make_unique<Cluster>(ctx, cluster_id, launch.cluster);
    for (std::uint32_t rank = 0; rank < cluster_size; ++rank) {
      const std::uint32_t sm = group * cluster_size + rank;
      Resident& r = g.ctas[rank];
      r.cta = std::make_unique<Cta>(ctx, sms[sm], *g.cluster, cluster_id * cluster_size + rank,
                                    launch.dynamic_smem_bytes, launch.block_threads, registers_per_thread);
      g.cluster->add(*r.cta);
      r.warps.clear();
      r.programs.clear();
      for (std::uint32_t w = 0; w < r.cta->num_warps(); ++w) {
        WarpState& ws = r.cta->warp(w);
        r.warps.emplace_back(ws, *r.cta, launch.grid_ctas);
        if (Tracer* t = ctx.tracer_for(sm))
          t->thread_name(static_cast<int>(sm), static_cast<int>(w), fmt::format("w{}", w));
        r.programs.push_back(program(r.warps.back()));
        if (!r.programs.back().valid()) throw InputError("the warp program returned no coroutine");
        r.programs.back().set_on_done(&Launch::warp_done, &ws);
        ws.handle = r.programs.back().handle();
      }
      Tracer* t = ctx.tracer_for(sm);
      if (t && cluster_id < groups.size()) {  // the SM's first CTA names its process (the CTA track shows later waves)
        t->process_name(static_cast<int>(sm),
                        cluster_size > 1 ? fmt::format("SM {}: CTA {} (cluster {} rank {})", sm, r.cta->id(),
                                                       cluster_id, rank)
                                         : fmt::format("SM {}: CTA {}", sm, r.cta->id()));
      }
      if (t) {
        t->thread_name(static_cast<int>(sm), kTmaTrack, "TMA unit");
        t->thread_name(static_cast<int>(sm), kBarrierTrack, "mbarrier phases");
        t->thread_name(static_cast<int>(sm), kMmaTrack, "MMA pipe");
        t->thread_name(static_cast<int>(sm), kCtaTrack, "CTA");
        t->thread_name(static_cast<int>(sm), kTmemTrack, "tcgen05.ld/st path");
        t->counter(static_cast<int>(sm), "SMEM bytes in use", at, launch.dynamic_smem_bytes);
      }
    }
    for (Resident& r : g.ctas) r.cta->start(at);
  }

  // Called inside the finishing CTA's last event. A cluster retires when all its CTAs have
  // finished (a peer may still touch an exited CTA's SMEM, which is reported), from a fresh
  // event, so no frame of a CTA is on the stack when it is destroyed.
  static void on_cta_finished(void* self, Cta& cta) {
    auto& l = *static_cast<Launch*>(self);
    if (!cta.cluster().finished()) return;
    Cycle at = l.ctx.now();
    for (std::uint32_t r = 0; r < cta.cluster().size(); ++r) at = std::max(at, cta.cluster().cta(r).finish_cycle());
    l.ctx.engine.schedule(at, &Launch::retire, self, cta.sm().index() / l.cluster_size);
  }

  static void retire(void* self, std::uint64_t group) {
    auto& l = *static_cast<Launch*>(self);
    Group& g = l.groups[group];
    for (Resident& r : g.ctas) {
      r.cta->check_tmem_released();
      const Cta& cta = *r.cta;
      for (std::uint32_t w = 0; w < cta.num_warps(); ++w) {
        const WarpState& ws = cta.warp(w);
        WarpSummary s{cta.sm().index(), cta.id(), w, ws.role, ws.start, ws.finish, ws.instructions, ws.activity, {}};
        for (const auto& [offset, cycles] : ws.barrier_wait) {
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
        t->counter(pid, "SMEM bytes in use", cta.finish_cycle(), 0);
      }
    }
    for (Resident& r : g.ctas) {
      r.programs.clear();
      r.warps.clear();
      r.cta.reset();
    }
    g.cluster.reset();
    l.dispatch(static_cast<std::uint32_t>(group), l.ctx.now());
  }

  std::string report() const {
    std::string out;
    for (const Group& g : groups)
      for (const Resident& r : g.ctas)
        if (r.cta && !r.cta->finished()) out += r.cta->wait_report();
    return out;
  }
};

Simulator::Simulator(const HardwareConfig& config, SimOptions options)
    : config_(config), options_(std::move(options)), gmem_(options_.mode == Mode::Functional) {}

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
  if (cs > config_.sm.count)
    throw InputError(fmt::format("launch: a cluster of {} CTAs does not fit on the {} SMs", cs, config_.sm.count));
  if (lc.dynamic_smem_bytes > config_.sm.max_smem_per_cta)
    throw InputError(fmt::format("launch: SMEM over capacity: {} bytes of dynamic shared memory requested, the {} config "
                                 "allows {} per CTA (sm.max_smem_per_cta)",
                                 lc.dynamic_smem_bytes, config_.name, config_.sm.max_smem_per_cta));

  std::unique_ptr<Tracer> tracer;
  if (!options_.trace_path.empty())
    tracer = std::make_unique<Tracer>(options_.trace_path, config_.clock_ghz, options_.trace_filter);
  const auto wall_start = std::chrono::steady_clock::now();
  Launch l(config_, options_.mode, kernel, gmem_, tracer.get(), options_.trace_sms, lc, program);
  std::vector<PhaseFlip> flips;
  if (options_.record_phase_flips) l.ctx.phase_flips = &flips;
  l.ctx.check_races = options_.check_races;

  for (std::uint32_t g = 0; g < l.groups.size(); ++g) l.dispatch(g, 0);
  struct ProgressSink {
    const Launch& launch;
    const SimOptions& options;
    static void report(void* self) {
      auto& s = *static_cast<ProgressSink*>(self);
      Progress p{s.launch.ctx.now(), s.launch.ctx.engine.events_processed(), s.launch.finished_ctas,
                 s.launch.launch.grid_ctas, 0};
      for (const Sm& sm : s.launch.sms) p.mmas += sm.mma().stats().mmas;
      s.options.progress(p);
    }
  } sink{l, options_};
  if (options_.progress) l.ctx.engine.set_progress(&ProgressSink::report, &sink);
  const bool drained = l.ctx.engine.run(options_.watchdog_cycles);
  const SimLocation at{std::string(kernel), -1, -1, "run", l.ctx.now()};
  if (!drained)
    throw WatchdogError(at, fmt::format("no completion after {} cycles (the watchdog limit); state of the resident CTAs:\n{}",
                                        options_.watchdog_cycles, l.report()));
  if (l.finished_ctas != lc.grid_ctas)
    throw DeadlockError(at, fmt::format("{} of {} CTAs never finished; every warp still running is blocked:\n{}",
                                        lc.grid_ctas - l.finished_ctas, lc.grid_ctas, l.report()));

  RunResult r;
  r.cycles = l.last_finish;
  r.events = l.ctx.engine.events_processed();
  r.sms_used = static_cast<std::uint32_t>(l.sms.size());
  r.ctas = lc.grid_ctas;
  for (const Sm& sm : l.sms) {
    const TmaStats& s = sm.tma().stats();
    r.tma.loads += s.loads;
    r.tma.load_bytes += s.load_bytes;
    r.tma.delivered_bytes += s.delivered_bytes;
    r.tma.stores += s.stores;
    r.tma.store_bytes += s.store_bytes;
    r.tma.prefetches += s.prefetches;
    r.tma.prefetch_bytes += s.prefetch_bytes;
    r.tma.busy_cycles += s.busy_cycles;
    const MmaStats& m = sm.mma().stats();
    r.mma.mmas += m.mmas;
    r.mma.flops += m.flops;
    r.mma.busy_cycles += m.busy_cycles;
    r.mma.copies += m.copies;
    r.mma.copy_bytes += m.copy_bytes;
  }
  r.warps = std::move(l.warps);
  r.phase_flips = std::move(flips);
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace bwsim
