#include "bwsim/hw/sm/Cta.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Sm.hpp"

namespace bwsim {
namespace {
const char* barrier_op_name(BarrierOp op) {
  switch (op) {
    case BarrierOp::Arrive: return "mbarrier.arrive";
    case BarrierOp::ArriveToken: return "mbarrier.arrive";
    case BarrierOp::ArriveExpectTx: return "mbarrier.arrive.expect_tx";
    case BarrierOp::ExpectTx: return "mbarrier.expect_tx";
    case BarrierOp::CompleteTx: return "mbarrier.complete_tx";
    case BarrierOp::Inval: return "mbarrier.inval";
    case BarrierOp::NamedArrive: return "bar.arrive";
    case BarrierOp::CommitArrive: return "tcgen05.commit arrive";
  }
  return "?";
}

bool is_arrival(BarrierOp op) {
  return op == BarrierOp::Arrive || op == BarrierOp::ArriveToken || op == BarrierOp::ArriveExpectTx ||
         op == BarrierOp::CommitArrive;
}

HbWarp::Arrival arrival_kind(BarrierOp op) {
  return op == BarrierOp::CommitArrive ? HbWarp::Arrival::Commit
         : op == BarrierOp::NamedArrive ? HbWarp::Arrival::Named
                                        : HbWarp::Arrival::Mbarrier;
}
}  // namespace

const char* activity_name(Activity a) {
  switch (a) {
    case Activity::Issue: return "issue";
    case Activity::Compute: return "compute";
    case Activity::MbarrierWait: return "mbarrier";
    case Activity::NamedBarrier: return "bar.sync";
    case Activity::ClusterBarrier: return "barrier.cluster";
    case Activity::BulkGroups: return "bulk wait_group";
    case Activity::TmemAlloc: return "tcgen05.alloc";
    case Activity::TmemWait: return "tcgen05.wait";
    case Activity::Registers: return "setmaxnreg";
    case Activity::Latency: return "latency";
    case Activity::WgmmaWait: return "wgmma.wait";
    case Activity::kCount: break;
  }
  return "?";
}

namespace {
Activity activity_of(const WarpState& ws) {
  switch (ws.wait) {
    case WaitKind::BarrierParity:
    case WaitKind::BarrierToken: return Activity::MbarrierWait;
    case WaitKind::NamedBarrier: return Activity::NamedBarrier;
    case WaitKind::BulkGroups:
    case WaitKind::BulkGroupsRead: return Activity::BulkGroups;
    case WaitKind::TmemAlloc: return Activity::TmemAlloc;
    case WaitKind::ClusterBarrier: return Activity::ClusterBarrier;
    case WaitKind::RegisterPool: return Activity::Registers;
    case WaitKind::CoreBlock: return Activity::Compute;  // the issue slots are counted when it finishes
    case WaitKind::Delay:
      return ws.wait_slot == kDelaySleep ? Activity::Compute
             : ws.wait_slot == kDelayTmem  ? Activity::TmemWait
             : ws.wait_slot == kDelayWgmma ? Activity::WgmmaWait
                                           : Activity::Latency;
    case WaitKind::None: break;
  }
  return Activity::Latency;
}
}  // namespace

const char* wait_kind_name(WaitKind k) {
  switch (k) {
    case WaitKind::None: return "nothing";
    case WaitKind::BarrierParity: return "mbarrier.try_wait.parity";
    case WaitKind::BarrierToken: return "mbarrier.try_wait";
    case WaitKind::NamedBarrier: return "bar.sync";
    case WaitKind::BulkGroups: return "cp.async.bulk.wait_group";
    case WaitKind::BulkGroupsRead: return "cp.async.bulk.wait_group.read";
    case WaitKind::Delay: return "delay";
    case WaitKind::TmemAlloc: return "tcgen05.alloc";
    case WaitKind::ClusterBarrier: return "barrier.cluster.wait";
    case WaitKind::RegisterPool: return "setmaxnreg.inc";
    case WaitKind::CoreBlock: return "CUDA-core block";
  }
  return "?";
}

Cta::Cta(SimContext& ctx, Sm& sm, Cluster& cluster, std::uint32_t id, std::uint32_t smem_bytes,
         std::uint32_t block_threads, std::uint32_t registers_per_thread, std::uint32_t sm_slot)
    : ctx_(ctx),
      sm_(sm),
      cluster_(cluster),
      id_(id),
      rank_(id % cluster.size()),
      block_threads_(block_threads),
      smem_(smem_bytes),
      warps_(block_threads / 32) {
  for (std::uint32_t i = 0; i < warps_.size(); ++i) {
    warps_[i].cta = this;
    warps_[i].cta_for_checks = this;
    warps_[i].index = i;
    warps_[i].lane_quadrant = i % 4;
    warps_[i].trace_tid = sm_slot * kWarpTracksPerCta + i;
    warps_[i].registers = registers_per_thread;
    ctx.race_check([&hb = cluster.hb(), &w = warps_[i].hb] { hb.add_warp(w); });
  }
  registers_free_ = ctx.config.sm.registers - registers_per_thread * block_threads;  // the launch checked it fits
  warpgroup_rounds_.resize((warps_.size() + 3) / 4);
  wgmma_groups_.resize((warps_.size() + 3) / 4);
}

Tracer* Cta::tracer() const { return ctx_.tracer ? ctx_.tracer_for(sm_.index()) : nullptr; }  // untraced: no SM lookup

// ---------------------------------------------------------------------------- errors

SimLocation Cta::where(const WarpState& ws, const char* op) const {
  // The acting warp may be a peer's (a remote arrive): name its own CTA.
  const Cta& c = *ws.cta;
  SimLocation at{ctx_.kernel, static_cast<int>(c.id_), static_cast<int>(ws.index), op, ctx_.now()};
  if (c.cluster_.size() > 1) {
    at.cluster = static_cast<int>(c.cluster_.id());
    at.cluster_rank = static_cast<int>(c.rank_);
  }
  return at;
}

void Cta::check_resident_for(WarpState& ws, const char* op) const {
  if (finished_)
    fail(Rule::ClusterPeerExited, ws, op,
         fmt::format("CTA rank {} of the cluster has already exited (at cycle {})", rank_, finish_cycle_),
         "keep every CTA resident while peers access its SMEM or barriers (cluster barrier or producer_tail "
         "before exit)");
}

void Cta::fail(Rule rule, WarpState& ws, const char* op, std::string what, std::string hint) const {
  if (RaceCheckThread::on_checker_thread()) throw RaceFoundOnThread{};  // the inline run locates it
  throw MisuseError(rule, where(ws, op), std::move(what), std::move(hint));
}

std::string Cta::barrier_label(std::uint32_t offset) const {
  const MBarrier* b = find_barrier(offset);
  const std::string where = cluster_.size() > 1 ? fmt::format("rank {} smem {:#x}", rank_, offset)
                                                : fmt::format("smem {:#x}", offset);
  if (b && !b->name.empty()) return fmt::format("'{}' ({})", b->name, where);
  return where;
}

std::string Cta::describe(const MBarrier& b) const {
  const char* status = b.status() == MBarrier::Status::Live ? "" : " [invalidated]";
  return fmt::format("mbarrier {}{}: phase {} (parity {}), pending {} of {} arrivals, tx-count {}",
                     barrier_label(b.offset()), status, b.phase(), b.parity(), b.pending(), b.expected(), b.tx());
}

void Cta::smem_access_failed(WarpState& ws, const char* op, std::uint64_t offset, std::uint64_t len,
                             std::uint32_t align) const {
  if (!smem_.in_bounds(offset, len))
    fail(Rule::SmemOutOfBounds, ws, op,
         fmt::format("SMEM access [{:#x}, {:#x}) lies outside the CTA's {} bytes of shared memory", offset,
                     offset + len, smem_.size()),
         "check the SMEM layout against the launch's dynamic SMEM size");
  if (align > 1 && offset % align != 0)
    fail(Rule::SmemMisaligned, ws, op, fmt::format("SMEM address {:#x} is not {}-byte aligned", offset, align),
         "align the buffer to the swizzle atom (1024 B for 128B swizzle, 512 for 64B, 256 for 32B, 128 without)");
  throw std::logic_error("smem_access_failed: the access is in bounds and aligned");
}

void Cta::find_clobbered_barrier(WarpState& ws, const char* op, std::uint32_t offset, std::uint32_t len) {
  auto it = std::lower_bound(live_offsets_.begin(), live_offsets_.end(), offset > 7 ? offset - 7 : 0);
  if (it != live_offsets_.end() && *it < offset + len && *it + 8 > offset) {
    const MBarrier& b = *find_barrier(*it);
    fail(Rule::BarrierClobbered, ws, op,
         fmt::format("SMEM [{:#x}, {:#x}) overlaps live {}", offset, offset + len, describe(b)),
         "keep data buffers and mbarriers apart in the SMEM layout");
  }
}

// ---------------------------------------------------------------------------- mbarriers

void Cta::index_barrier(std::uint32_t word, std::uint32_t entry) {
  if (barrier_index_.empty()) index_base_ = word;
  if (word < index_base_) {  // widen the span downwards
    barrier_index_.insert(barrier_index_.begin(), index_base_ - word, 0);
    index_base_ = word;
  }
  if (word - index_base_ >= barrier_index_.size()) barrier_index_.resize(word - index_base_ + 1, 0);
  barrier_index_[word - index_base_] = entry;
}

const MBarrier* Cta::find_barrier(std::uint32_t offset) const {
  return const_cast<Cta*>(this)->barrier_slot(offset);
}

MBarrier& Cta::live_barrier_checked(WarpState& ws, std::uint32_t offset, const char* op) {
  if (offset % 8 != 0)
    fail(Rule::BarrierMisaligned, ws, op, fmt::format("mbarrier address {:#x} is not 8-byte aligned", offset),
         "an mbarrier is a 64-bit object: align it to 8 bytes");
  check_smem(ws, op, offset, 8, 8);
  MBarrier* b = barrier_slot(offset);
  if (!b || b->status() == MBarrier::Status::Uninitialized)
    fail(Rule::BarrierUninitialized, ws, op, fmt::format("no mbarrier was initialised at smem {:#x}", offset),
         "call mbarrier_init on it (one thread) and synchronise before other warps use it");
  if (b->status() == MBarrier::Status::Invalidated)
    fail(Rule::BarrierInvalidated, ws, op, fmt::format("{} was invalidated", describe(*b)),
         "re-initialise the barrier before using it again");
  if (ws.cta != this && !b->visible_to_cluster)
    fail(Rule::BarrierUninitialized, ws, op,
         fmt::format("{} of CTA rank {} is used by a peer before its init was made visible to the cluster",
                     describe(*b), rank_),
         "after mbarrier.init: fence.mbarrier_init (or a .release cluster arrive), then barrier.cluster before "
         "peers use it");
  return *b;
}

void Cta::fence_barrier_inits(const WarpState& ws) {
  for (MBarrier& b : barriers_)
    if (b.init_warp == &ws) b.init_fenced = true;
}

void Cta::publish_barrier_inits() {
  for (MBarrier& b : barriers_)
    if (b.status() == MBarrier::Status::Live &&
        (b.init_fenced || (b.init_warp && b.init_warp->cluster_arrive_release)))
      b.visible_to_cluster = true;
}

void Cta::barrier_init(WarpState& ws, std::uint32_t offset, std::uint32_t count, std::string name) {
  const char* op = "mbarrier.init";
  if (offset % 8 != 0)
    fail(Rule::BarrierMisaligned, ws, op, fmt::format("mbarrier address {:#x} is not 8-byte aligned", offset),
         "an mbarrier is a 64-bit object: align it to 8 bytes");
  check_smem(ws, op, offset, 8, 8);
  if (count < 1 || count > MBarrier::kMaxCount)
    fail(Rule::BarrierBadInit, ws, op, fmt::format("arrival count {} is outside 1..{}", count, MBarrier::kMaxCount),
         "the expected arrival count must be at least 1");
  MBarrier* b = barrier_slot(offset);
  if (b && b->status() == MBarrier::Status::Live) settle_passed_ahead(*b);
  if (b && b->status() == MBarrier::Status::Live &&
      (waited_on(*b) || b->tx() != 0 || b->pending() != b->expected()))
    fail(Rule::BarrierReinitInUse, ws, op, fmt::format("re-initialising {} while it is in use", describe(*b)),
         "invalidate the barrier only after every waiter passed and every transaction completed");
  if (!b) {
    index_barrier(offset / 8, static_cast<std::uint32_t>(barriers_.size()) + 1);
    barriers_.emplace_back(offset);
    b = &barriers_.back();
    if (ctx_.check_races) b->hb_object = cluster_.new_hb_object();
  }
  b->hb_base += static_cast<std::uint32_t>(b->phase());  // the earlier inits' phases
  if (b->status() != MBarrier::Status::Live)
    live_offsets_.insert(std::lower_bound(live_offsets_.begin(), live_offsets_.end(), offset), offset);
  b->init(count);
  b->init_warp = &ws;
  b->init_fenced = false;
  b->visible_to_cluster = false;
  b->name = std::move(name);
  b->last_op = op;
  b->last_warp = static_cast<std::int16_t>(ws.index);
  b->last_cycle = ctx_.now();
}

// Event argument: op (8 bits) | SMEM offset (20 bits) | target rank (4 bits) | value (32 bits).
void Cta::on_barrier_op(void* wsp, std::uint64_t packed) {
  auto& ws = *static_cast<WarpState*>(wsp);
  const auto op = static_cast<BarrierOp>(packed & 0xff);
  const auto offset = static_cast<std::uint32_t>((packed >> 8) & 0xfffff);
  const auto rank = static_cast<std::uint32_t>((packed >> 28) & 0xf);
  const auto value = static_cast<std::uint32_t>(packed >> 32);
  Cta& target = ws.cta->cluster_.cta(rank);
  if (&target != ws.cta) target.check_resident_for(ws, barrier_op_name(op));
  target.barrier_apply(ws, op, offset, value, barrier_op_name(op));
  ws.cta->async_end();
}

void Cta::barrier_op_at(WarpState& ws, Cycle at, BarrierOp op, std::uint32_t offset, std::uint32_t value) {
  static_assert(kMaxClusterCtas <= 16, "the rank travels in 4 bits");
  const std::uint64_t packed = static_cast<std::uint64_t>(op) | (static_cast<std::uint64_t>(offset & 0xfffff) << 8) |
                               (static_cast<std::uint64_t>(rank_) << 28) | (static_cast<std::uint64_t>(value) << 32);
  ws.cta->async_begin();  // the issuing CTA stays resident until its last arrival has landed
  if (ws.cta != this) ctx_.couple_at(Coupling::Cluster, at);
  if (is_arrival(op) || op == BarrierOp::NamedArrive)
    ctx_.race_check([&hb = cluster_.hb(), &w = ws.hb, target = this, offset, kind = arrival_kind(op)] {
      hb.release_later(w, target, offset, kind);
    });
  ctx_.engine.schedule(at, &Cta::on_barrier_op, &ws, packed);
}

void Cta::barrier_apply(WarpState& ws, BarrierOp op, std::uint32_t offset, std::uint32_t value, const char* opname) {
  if (op == BarrierOp::NamedArrive) {
    named_arrive(ws, offset, value, false);
    return;
  }
  MBarrier& b = live_barrier(ws, offset, opname);
  if (is_arrival(op))
    ctx_.race_check([&hb = cluster_.hb(), &w = ws.hb, target = this, offset, kind = arrival_kind(op), o = b.hb_object] {
      hb.landed(w, target, offset, kind, o);
    });
  MBarrier::Outcome out = MBarrier::Outcome::Pending;
  switch (op) {
    case BarrierOp::Arrive:
    case BarrierOp::CommitArrive: out = b.arrive(value); break;
    case BarrierOp::ArriveToken:
      ws.token_result = b.phase();
      out = b.arrive(value);
      break;
    case BarrierOp::ArriveExpectTx: out = b.arrive(1, value); break;
    case BarrierOp::ExpectTx: out = b.expect_tx(value); break;
    case BarrierOp::CompleteTx: out = b.complete_tx(value); break;
    case BarrierOp::Inval: invalidate_barrier(ws, b, opname); break;
    case BarrierOp::NamedArrive: break;
  }
  b.last_op = opname;
  b.last_warp = static_cast<std::int16_t>(ws.index);
  b.last_cycle = ctx_.now();
  if (out == MBarrier::Outcome::PhaseCompleted)
    phase_completed(b);
  else if (out != MBarrier::Outcome::Pending) [[unlikely]]
    barrier_op_failed(ws, op, value, b, out, opname);
}

void Cta::invalidate_barrier(WarpState& ws, MBarrier& b, const char* opname) {
  settle_passed_ahead(b);
  if (waited_on(b))
    fail(Rule::BarrierReinitInUse, ws, opname, fmt::format("invalidating {} while warps wait on it", describe(b)),
         "invalidate a barrier only after every waiter has passed");
  b.invalidate();
  live_offsets_.erase(std::lower_bound(live_offsets_.begin(), live_offsets_.end(), b.offset()));
}

void Cta::barrier_op_failed(WarpState& ws, BarrierOp op, std::uint32_t value, const MBarrier& b,
                            MBarrier::Outcome out, const char* opname) const {
  switch (out) {
    case MBarrier::Outcome::OverArrival:
      fail(Rule::OverArrival, ws, opname,
           fmt::format("arrival count {} exceeds the {} arrivals still pending on {}", op == BarrierOp::ArriveExpectTx ? 1 : value,
                       b.pending(), describe(b)),
           "more arrivals than the init count in one phase: check the barrier's count and who arrives on it");
    case MBarrier::Outcome::TxOutOfRange:
      fail(Rule::TxOutOfRange, ws, opname, fmt::format("tx-count left +-(2^20-1): {}", describe(b)),
           "expect_tx at most 2^20-1 bytes per phase");
    case MBarrier::Outcome::TxUnderflow:
      fail(Rule::TxUnderflow, ws, opname,
           fmt::format("all arrivals are in but more bytes completed than were expected: {}", describe(b)),
           "the expect_tx byte count must equal the bytes of the TMA loads that signal this barrier");
    case MBarrier::Outcome::Pending:
    case MBarrier::Outcome::PhaseCompleted: break;
  }
  throw std::logic_error("barrier_op_failed: the operation did not fail");
}

void Cta::phase_completed(MBarrier& b) {
  const Cycle now = ctx_.now();
  settle_passed_ahead(b);
  ctx_.race_check([&hb = cluster_.hb(), o = b.hb_object, n = b.hb_base + static_cast<HbClock>(b.phase())] {
    hb.completed(o, n);
  });
  if (ctx_.phase_flips) ctx_.phase_flips->push_back(PhaseFlip{id_, b.offset(), b.name, b.phase() - 1, now});
  if (tracer())
    tracer()->instant(static_cast<int>(sm_.index()), kBarrierTrack,
                         fmt::format("{} phase {} done", b.name.empty() ? barrier_label(b.offset()) : b.name,
                                     b.phase() - 1),
                         now, fmt::format(R"("smem":{},"parity_now":{})", b.offset(), b.parity()));
  WarpState** link = &b.waiters;
  while (*link) {
    WarpState* w = *link;
    if (waits_later(*w)) {  // its clock reaches the wait after this flip: it catches up as it would have
      *link = w->next_waiter;
      w->next_waiter = nullptr;
      w->registered = false;
      ctx_.engine.schedule_as(w->registered_seq, w->registered_at, &Cta::on_sync, w);
      continue;
    }
    const bool done = w->wait == WaitKind::BarrierParity ? b.parity_completed(static_cast<std::uint32_t>(w->wait_value))
                                                         : b.phase() > w->wait_value;
    if (done) {
      *link = w->next_waiter;
      w->next_waiter = nullptr;
      note_observed(*w, b);
      const Cycle at = now + ctx_.config.mbarrier.wakeup_latency;
      if (Tracer* t = tracer())  // an arrow from the flip to the end of the warp's wait
        t->flow(static_cast<int>(sm_.index()), kBarrierTrack, now, static_cast<int>(sm_.index()),
                static_cast<int>(w->trace_tid), at > w->wait_since ? at - 1 : at, "phase -> wake");
      wake(*w, at);
    } else {
      link = &w->next_waiter;
    }
  }
}

// ---------------------------------------------------------------------------- named barriers

void Cta::named_arrive(WarpState& ws, std::uint32_t id, std::uint32_t threads, bool wait) {
  const char* op = wait ? "bar.sync" : "bar.arrive";
  if (id >= kNamedBarriers)
    fail(Rule::NamedBarrierMisuse, ws, op, fmt::format("barrier id {} is outside 0..15", id), "use ids 0..15");
  if (threads == 0 || threads % 32 != 0 || threads > block_threads_)
    fail(Rule::NamedBarrierMisuse, ws, op,
         fmt::format("thread count {} must be a non-zero multiple of 32 and at most the CTA's {} threads", threads,
                     block_threads_),
         "count every thread of every participating warp");
  NamedBarrier& nb = named_[id];
  if (nb.arrived == 0) nb.expected = threads;
  if (nb.expected != threads)
    fail(Rule::NamedBarrierMisuse, ws, op,
         fmt::format("barrier {} expects {} threads in this round, this warp says {}", id, nb.expected, threads),
         "every warp of one bar.sync round must pass the same thread count");
  nb.arrived += 32;
  if (ctx_.check_races) {  // bar.sync arrives now; bar.arrive's arrival was issued earlier and lands now
    // A clock component only for the named barriers a kernel uses (every join is as long as the components).
    if (nb.hb_object == kNoHbObject) nb.hb_object = cluster_.new_hb_object();
    ctx_.race_check([&hb = cluster_.hb(), &w = ws.hb, wait, target = this, id, o = nb.hb_object] {
      if (wait) hb.release_now(w, o);
      else hb.landed(w, target, id, HbWarp::Arrival::Named, o);
    });
  }
  if (wait) {
    ws.next_waiter = nb.waiters;
    nb.waiters = &ws;
    ws.registered = true;
  }
  if (nb.arrived < nb.expected) return;
  ++nb.rounds;
  ctx_.race_check([&hb = cluster_.hb(), o = nb.hb_object, n = nb.rounds] { hb.completed(o, n); });
  const Cycle at = ctx_.now() + ctx_.config.warp.named_barrier_latency;
  for (WarpState* w = nb.waiters; w;) {
    WarpState* next = w->next_waiter;
    w->next_waiter = nullptr;
    ctx_.race_check([&hb = cluster_.hb(), &hw = w->hb, o = nb.hb_object] { hb.acquire(hw, o); });
    wake(*w, at);
    w = next;
  }
  nb.expected = 0;
  nb.arrived = 0;
  nb.waiters = nullptr;
}

// ---------------------------------------------------------------------------- blocking

void Cta::note_observed(WarpState& ws, const MBarrier& b) const {
  ctx_.race_check([&hb = cluster_.hb(), &w = ws.hb, o = b.hb_object] { hb.acquire(w, o); });
}

// A parity wait by a warp that knows of fewer than all but the last phase of this barrier cannot
// mean the phase it names: on hardware it passes (or blocks) for the wrong phase (the ABA of a
// warp two phases behind). What the warp knows is happens-before's: the phases it saw complete and
// those it learned of through any chain of releases (CUTLASS's ping-pong consumers skip the stages
// the other warpgroup consumes and learn of them through the order barrier). A warp that knows
// nothing of this barrier's present initialisation is not judged (its first wait). It needs the
// happens-before record, so the check runs with race checking only.
namespace {
// Whether a warp that knows `known` phases of a barrier object (happens-before) waits on a parity
// of a phase long gone, with `phase` phases completed since the object's `base`.
bool stale(HbClock known, HbClock base, std::uint64_t phase) { return known > base && phase >= known - base + 2; }
}  // namespace

bool Cta::stale_parity(const WarpState& ws, const MBarrier& b) const {
  if (!ctx_.check_races) return false;
  return stale(cluster_.hb().known(ws.hb, b.hb_object), b.hb_base, b.phase());
}

void Cta::check_stale_parity(WarpState& ws, const MBarrier& b) {
  if (ctx_.race_thread) {  // found there, the inline run that follows reports it
    ctx_.race_check([&hb = cluster_.hb(), &w = ws.hb, o = b.hb_object, base = b.hb_base, phase = b.phase()] {
      if (stale(hb.known(w, o), base, phase)) throw RaceFoundOnThread{};
    });
    return;
  }
  if (!stale_parity(ws, b)) return;
  const std::uint64_t known_here = cluster_.hb().known(ws.hb, b.hb_object) - b.hb_base;
  fail(Rule::StaleParity, ws, "mbarrier.try_wait.parity",
       fmt::format("waiting for parity {} but {} phases of {} completed since the last one this warp knows of "
                   "(phase {}): the wait names a phase that is long gone",
                   ws.wait_value, b.phase() - known_here, describe(b), known_here - 1),
       "flip the phase bit every time the stage index wraps (PipelineState), once per completed phase");
}

bool Cta::satisfied(WarpState& ws) {
  switch (ws.wait) {
    case WaitKind::BarrierParity: {
      MBarrier& b = live_barrier(ws, ws.wait_slot, wait_kind_name(ws.wait));
      check_stale_parity(ws, b);
      if (!b.parity_completed(static_cast<std::uint32_t>(ws.wait_value))) return false;
      note_observed(ws, b);
      return true;
    }
    case WaitKind::BarrierToken: {
      MBarrier& b = live_barrier(ws, ws.wait_slot, wait_kind_name(ws.wait));
      if (b.phase() <= ws.wait_value) return false;
      note_observed(ws, b);
      return true;
    }
    case WaitKind::BulkGroups: return ws.bulk.satisfied(static_cast<std::uint32_t>(ws.wait_value), false);
    case WaitKind::BulkGroupsRead: return ws.bulk.satisfied(static_cast<std::uint32_t>(ws.wait_value), true);
    case WaitKind::Delay: return ctx_.now() >= ws.wait_value;
    case WaitKind::TmemAlloc: return tmem_try_alloc(ws);  // allocates when it passes
    case WaitKind::ClusterBarrier:
      if (cluster_.barrier_phase() <= ws.wait_value || ctx_.now() < cluster_.barrier_wake_at()) return false;
      cluster_.barrier_observed(ws);
      return true;
    case WaitKind::RegisterPool: return try_take_registers(ws);
    case WaitKind::CoreBlock: return false;  // the sub-partition wakes it
    case WaitKind::NamedBarrier:
    case WaitKind::None: return false;
  }
  return false;
}

bool Cta::ready_now(WarpState& ws) {
  if (ws.ready > ctx_.now() || ws.wait == WaitKind::NamedBarrier) return false;
  if (!satisfied(ws)) return false;
  ws.wait = WaitKind::None;
  ws.ready += ctx_.config.warp.issue_cycles;
  ws.account(Activity::Issue, ctx_.config.warp.issue_cycles);
  ++ws.instructions;
  return true;
}

void Cta::park(WarpState& ws, std::coroutine_handle<> handle) {
  ws.handle = handle;
  ws.wait_since = ws.ready;
  // A delay depends on nothing outside the warp, so its resume is scheduled now rather than by a
  // clock-catching event at `ready`: one event instead of two. (The resume may now run before
  // events of its cycle scheduled between now and `ready`; no prediction changed by it.)
  if (ws.wait == WaitKind::Delay) {
    ctx_.engine.schedule(std::max<Cycle>(ws.wait_value, std::max(ws.ready, ctx_.now())), &Cta::on_resume, &ws);
    return;
  }
  if (ws.ready > ctx_.now()) {
    if (register_ahead(ws)) return;
    ctx_.engine.schedule(ws.ready, &Cta::on_sync, &ws);
    return;
  }
  enlist(ws);
}

bool Cta::register_ahead(WarpState& ws) {
  if (ws.wait != WaitKind::BarrierParity && ws.wait != WaitKind::BarrierToken) return false;
  MBarrier* b = ws.wait_slot % 8 == 0 ? barrier_slot(ws.wait_slot) : nullptr;
  if (!b || b->status() != MBarrier::Status::Live) return false;
  const bool parity = ws.wait == WaitKind::BarrierParity;
  if (parity) {
    if (ctx_.race_thread) check_stale_parity(ws, *b);  // posted: the wait goes on as not stale
    else if (stale_parity(ws, *b)) return false;       // the catch-up reports it at the warp's cycle
  }
  const bool passes = parity ? b->parity_completed(static_cast<std::uint32_t>(ws.wait_value)) : b->phase() > ws.wait_value;
  // Until the barrier's next change its state stays as it is now, so the catch-up at ws.ready would
  // list the warp or let it pass; a change before then (settle_passed_ahead, phase_completed)
  // finds it and schedules that catch-up after all.
  ws.registered = true;
  ws.registered_at = ws.ready;
  ws.registered_seq = ctx_.engine.take_seq();
  add_waiter(*b, ws);
  if (passes) {  // resumes as the catch-up's pass would (enlist): after its issue slot
    ws.passed_ahead = true;
    ctx_.engine.schedule(ws.ready + ctx_.config.warp.issue_cycles, &Cta::on_resume, &ws, ++ws.resume_token);
  }
  return true;
}

void Cta::settle_passed_ahead(MBarrier& b) {
  WarpState** link = &b.waiters;
  while (*link) {
    WarpState* w = *link;
    if (!w->passed_ahead) {
      link = &w->next_waiter;
      continue;
    }
    *link = w->next_waiter;
    w->next_waiter = nullptr;
    w->passed_ahead = false;
    if (waits_later(*w)) {
      ++w->resume_token;  // its scheduled resume no longer counts
      w->registered = false;
      ctx_.engine.schedule_as(w->registered_seq, w->registered_at, &Cta::on_sync, w);
    } else {
      note_observed(*w, b);  // its resume, scheduled, stands
    }
  }
}

void Cta::add_waiter(MBarrier& b, WarpState& ws) {
  auto later = [](const WarpState& x, const WarpState& y) {
    return x.registered_at > y.registered_at || (x.registered_at == y.registered_at && x.registered_seq > y.registered_seq);
  };
  WarpState** link = &b.waiters;
  while (*link && later(**link, ws)) link = &(*link)->next_waiter;
  ws.next_waiter = *link;
  *link = &ws;
}

void Cta::remove_waiter(MBarrier& b, WarpState& ws) {
  WarpState** link = &b.waiters;
  while (*link != &ws) link = &(*link)->next_waiter;
  *link = ws.next_waiter;
  ws.next_waiter = nullptr;
}

bool Cta::waits_later(const WarpState& ws) const {
  const Cycle now = ctx_.now();
  return ws.registered_at > now || (ws.registered_at == now && ws.registered_seq > ctx_.engine.running_seq());
}

bool Cta::waited_on(const MBarrier& b) const {
  for (const WarpState* w = b.waiters; w; w = w->next_waiter)
    if (!waits_later(*w)) return true;
  return false;
}

void Cta::on_sync(void* wsp, std::uint64_t) {
  auto& ws = *static_cast<WarpState*>(wsp);
  ws.cta->enlist(ws);
}

// The warp's clock has caught up: take the wait's effect (named barrier arrival) or check it,
// then either resume now or register where the releasing event will find it.
void Cta::enlist(WarpState& ws) {
  switch (ws.wait) {
    case WaitKind::NamedBarrier: {
      // bar.sync's arrival goes to the SM's SMEM pipe behind the shared-memory accesses queued
      // there, every warp's (what orders the warp's stores before the barrier): it arrives once
      // the port has moved them. Checked now that the engine has reached the warp, so every warp
      // that took port cycles up to now has taken them. Ours: h100/h200_epilogue.csv
      // "epilogue_st_bar_wg2": two warpgroups' chunks of 16 st.shared.b32 per thread with a
      // bar.sync before and after take 207 cycles a chunk, where one warpgroup storing while the
      // other waits at its barrier would take the port's 128 (16 KiB at 128 B/clk); the one-
      // warpgroup rows are unchanged by it. The port's cycles include fence.proxy.async's, which
      // silicon's bar.sync does not wait for without stores ("epilogue_fence_bar_wg2": 96.5, the
      // model 111), but does beside them ("epilogue_no_tma_wg2", the GEMM's staging: 246, the
      // model 239; without the fences' cycles 190).
      const Cycle drained = sm_.smem_port().free_from(ctx_.now(), ctx_.now());
      if (drained > ctx_.now()) {
        ctx_.engine.schedule(drained, &Cta::on_sync, &ws);
        return;
      }
      named_arrive(ws, ws.wait_slot, static_cast<std::uint32_t>(ws.wait_value), true);
      return;
    }
    case WaitKind::CoreBlock:
      sm_.sub_partition(ws.index % kSubPartitions).start(*this, ws, *ws.block, sm_.pipe_stats());
      return;
    default: break;
  }
  if (satisfied(ws)) {  // passes at once: costs its issue slot, as in ready_now()
    ws.registered = true;
    wake(ws, ctx_.now() + ctx_.config.warp.issue_cycles);
    return;
  }
  ws.registered = true;
  if (ws.wait == WaitKind::BarrierParity || ws.wait == WaitKind::BarrierToken) {
    MBarrier& b = live_barrier(ws, ws.wait_slot, wait_kind_name(ws.wait));
    ws.registered_at = ctx_.now();
    ws.registered_seq = ctx_.engine.running_seq();
    add_waiter(b, ws);
  }
  if (ws.wait == WaitKind::TmemAlloc && !ws.pair_alloc) sm_.tmem().add_waiter(ws);
  if (ws.wait == WaitKind::RegisterPool) register_waiters_.push_back(&ws);
  if (ws.wait == WaitKind::ClusterBarrier) {
    if (cluster_.barrier_phase() > ws.wait_value) {
      cluster_.barrier_observed(ws);
      wake(ws, cluster_.barrier_wake_at());  // completed; its waiters resume later
    } else
      cluster_.add_barrier_waiter(ws);
  }
  // Bulk-group waits are re-checked by bulk_progress().
}

void Cta::wake(WarpState& ws, Cycle at) {
  ws.registered = false;
  ctx_.engine.schedule(at, &Cta::on_resume, &ws);
}

void Cta::trace_wait(const WarpState& ws, Cycle now) const {
  std::string what = wait_kind_name(ws.wait);
  if (ws.wait == WaitKind::BarrierParity || ws.wait == WaitKind::BarrierToken)
    what = fmt::format("wait {} p{}", barrier_label(ws.wait_slot), ws.wait_value);
  else if (ws.wait == WaitKind::NamedBarrier)
    what = fmt::format("bar.sync {}", ws.wait_slot);
  tracer()->span(static_cast<int>(sm_.index()), static_cast<int>(ws.trace_tid), what, ws.wait_since,
                 now - ws.wait_since);
}

void Cta::on_resume(void* wsp, std::uint64_t token) {
  auto& ws = *static_cast<WarpState*>(wsp);
  Cta& cta = *ws.cta;
  if (token != 0) {  // a pass listed ahead (register_ahead)
    if (token != ws.resume_token) return;  // taken back by a change of its barrier (settle_passed_ahead)
    ws.registered = false;
    if (ws.passed_ahead) {  // its barrier did not change since: leave its list, observing the phase
      MBarrier& b = *cta.barrier_slot(ws.wait_slot);
      remove_waiter(b, ws);
      ws.passed_ahead = false;
      cta.note_observed(ws, b);
    }
  }
  const Cycle now = cta.ctx_.now();
  // (Delays and blocks are traced by the operation that waited.)
  if (cta.tracer() && now > ws.wait_since && ws.wait != WaitKind::Delay && ws.wait != WaitKind::CoreBlock)
    cta.trace_wait(ws, now);
  const Cycle waited = now - ws.wait_since;
  if (ws.wait == WaitKind::BarrierParity || ws.wait == WaitKind::BarrierToken)
    ws.barrier_wait.add(ws.wait_slot, waited);  // Activity::MbarrierWait (activity_totals)
  else
    ws.account(activity_of(ws), waited);
  ws.wait = WaitKind::None;
  ws.ready = now;
  ++ws.instructions;
  ws.handle.resume();
}

void Cta::bulk_progress(WarpState& ws) {
  if (!ws.registered) return;
  if ((ws.wait == WaitKind::BulkGroups || ws.wait == WaitKind::BulkGroupsRead) && satisfied(ws))
    wake(ws, ctx_.now());
}

// ---------------------------------------------------------------------------- lifetime

void Cta::start(Cycle at) {
  warps_running_ = num_warps();
  cluster_.live_warps_ += num_warps();
  for (auto& ws : warps_) {
    ws.ready = at;
    ws.start = at;
    ctx_.engine.schedule_resume(at, ws.handle);
  }
}

void Cta::warp_finished(WarpState& ws) {
  // The CTA's SMEM goes back to the SM when its threads exit: a TMA store still reading it would
  // read whatever the next CTA writes there (reported when the CTA retires, check_exit_stores).
  if (ws.bulk.reads_pending() && !exit_with_store_) {
    exit_with_store_ = &ws;
    exit_with_store_at_ = ctx_.now();
  }
  ws.done = true;
  last_warp_ = &ws;
  ws.finish = std::max(ws.ready, ctx_.now());
  --warps_running_;
  cluster_.warp_exited(ws);
  check_finished();
}

void Cta::check_exit_stores() {
  if (exit_with_store_)
    fail(Rule::ExitWithPendingStore, *exit_with_store_, "warp exit",
         fmt::format("the warp exited at cycle {} while its TMA stores still read SMEM", exit_with_store_at_),
         "cp.async.bulk.wait_group.read 0 (or wait_group 0) before the warp exits");
}

void Cta::async_end() {
  --async_outstanding_;
  check_finished();
}

void Cta::check_finished() {
  if (finished_ || warps_running_ != 0 || async_outstanding_ != 0) return;
  finished_ = true;
  finish_cycle_ = ctx_.now();
  for (const auto& w : warps_) finish_cycle_ = std::max(finish_cycle_, w.finish);
  sm_.cta_finished(*this);
}

Cycle Cta::latest_mbarrier_wait() const {
  Cycle latest = 0;
  for (const auto& w : warps_)
    if (!w.done && (w.wait == WaitKind::BarrierParity || w.wait == WaitKind::BarrierToken))
      latest = std::max(latest, w.wait_since);
  return latest;
}

std::string Cta::wait_report() const {
  std::string out = cluster_.size() > 1
                        ? fmt::format("CTA {} (cluster {} rank {}) on SM {}:\n", id_, cluster_.id(), rank_, sm_.index())
                        : fmt::format("CTA {} on SM {}:\n", id_, sm_.index());
  std::vector<std::uint32_t> involved;
  for (const auto& w : warps_) {
    std::string who = w.role.empty() ? fmt::format("warp {}", w.index) : fmt::format("warp {} ({})", w.index, w.role);
    if (w.done) {
      out += fmt::format("  {}: finished at cycle {}\n", who, w.finish);
      continue;
    }
    switch (w.wait) {
      case WaitKind::BarrierParity:
      case WaitKind::BarrierToken:
        out += fmt::format("  {}: blocked in {} on mbarrier {} waiting for {} {} since cycle {}\n", who,
                           wait_kind_name(w.wait), barrier_label(w.wait_slot),
                           w.wait == WaitKind::BarrierParity ? "phase parity" : "completion of phase", w.wait_value,
                           w.wait_since);
        if (std::find(involved.begin(), involved.end(), w.wait_slot) == involved.end()) involved.push_back(w.wait_slot);
        break;
      case WaitKind::NamedBarrier:
        out += fmt::format("  {}: blocked in bar.sync {} ({} threads expected, {} arrived) since cycle {}\n", who,
                           w.wait_slot, named_[w.wait_slot].expected, named_[w.wait_slot].arrived, w.wait_since);
        break;
      case WaitKind::BulkGroups:
      case WaitKind::BulkGroupsRead:
        out += fmt::format("  {}: blocked in {} {} since cycle {}\n", who, wait_kind_name(w.wait), w.wait_value,
                           w.wait_since);
        break;
      case WaitKind::TmemAlloc:
        if (w.pair_alloc)
          out += fmt::format("  {}: blocked in tcgen05.alloc.cta_group::2 of {} columns since cycle {}, waiting for a "
                             "warp of the peer CTA (rank {}) to allocate too\n",
                             who, w.wait_value, w.wait_since, rank_ ^ 1u);
        else
          out += fmt::format("  {}: blocked in tcgen05.alloc of {} columns since cycle {} ({} of {} TMEM columns free)\n",
                             who, w.wait_value, w.wait_since, sm_.tmem().free_columns(), sm_.tmem().columns());
        break;
      case WaitKind::RegisterPool:
        out += fmt::format("  {}: blocked in setmaxnreg.inc to {} registers per thread (has {}) since cycle {}; {} of "
                           "{} registers of the pool free\n",
                           who, w.wait_value, w.registers, w.wait_since, registers_free_, ctx_.config.sm.registers);
        break;
      case WaitKind::ClusterBarrier:
        out += fmt::format("  {}: blocked in barrier.cluster.wait for phase {} since cycle {} ({} of {} live warps of "
                           "cluster {} arrived)\n",
                           who, w.wait_value, w.wait_since, cluster_.barrier_arrived(), cluster_.barrier_expected(),
                           cluster_.id());
        break;
      default:
        out += fmt::format("  {}: runnable ({}), clock at cycle {}\n", who, wait_kind_name(w.wait), w.ready);
    }
  }
  for (std::uint32_t off : involved) {
    const MBarrier* b = find_barrier(off);
    if (!b) continue;
    out += fmt::format("  {}; last touched by {} (warp {}) at cycle {}\n", describe(*b), b->last_op, b->last_warp,
                       b->last_cycle);
  }
  if (async_outstanding_) out += fmt::format("  {} TMA operations still in flight\n", async_outstanding_);
  return out;
}

}  // namespace bwsim
