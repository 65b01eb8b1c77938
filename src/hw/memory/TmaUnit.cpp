#include "bwsim/hw/memory/TmaUnit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/sm/Sm.hpp"
#include "bwsim/hw/memory/TensorCopy.hpp"

namespace bwsim {
namespace {
std::string coords_text(const TensorMap& map, const TensorCoords& c) {
  std::string s = "(";
  for (std::uint32_t i = 0; i < map.rank(); ++i) s += fmt::format("{}{}", i ? "," : "", c[i]);
  return s + ")";
}
}  // namespace

const StatGroup<TmaStats>& TmaStats::declared() {
  static const StatGroup<TmaStats> group = [] {
    StatGroup<TmaStats> g("tma");
    g.counter("loads", StatUnit::Count, "tensor loads issued (a multicast load once)", &TmaStats::loads)
        .counter("load_bytes", StatUnit::Bytes, "bytes the loads read from the L2 (a multicast load once)",
                 &TmaStats::load_bytes)
        .counter("delivered_bytes", StatUnit::Bytes, "bytes the loads wrote into SMEM (once per destination CTA)",
                 &TmaStats::delivered_bytes)
        .counter("stores", StatUnit::Count, "tensor stores issued", &TmaStats::stores)
        .counter("store_bytes", StatUnit::Bytes, "bytes the stores wrote to GMEM (clipped to the tensor)",
                 &TmaStats::store_bytes)
        .counter("reduces", StatUnit::Count, "tensor reductions (cp.reduce.async.bulk .add) issued", &TmaStats::reduces)
        .counter("reduce_bytes", StatUnit::Bytes, "bytes the reductions added into GMEM (clipped to the tensor)",
                 &TmaStats::reduce_bytes)
        .counter("gated_loads", StatUnit::Count, "loads that waited for room in their CPC's bytes in flight",
                 &TmaStats::gated_loads)
        .counter("gate_wait_cycles", StatUnit::Cycles, "cycles those loads waited (l2.cpc_load_bytes_in_flight)",
                 &TmaStats::gate_wait_cycles)
        .counter("prefetches", StatUnit::Count, "L2 prefetches issued", &TmaStats::prefetches)
        .counter("prefetch_bytes", StatUnit::Bytes, "bytes of the prefetched boxes", &TmaStats::prefetch_bytes)
        .counter("busy_cycles", StatUnit::Cycles, "cycles the units spent streaming requests", &TmaStats::busy_cycles)
        .formula("busy_fraction", StatUnit::Fraction, "busy_cycles over the used SMs' cycles",
                 [](const TmaStats& s, const StatContext& c) -> StatValue { return c.busy_fraction(s.busy_cycles); },
                 {"TMA"});
    return g;
  }();
  return group;
}

TmaUnit::TmaUnit(SimContext& ctx, int sm_index)
    : ctx_(ctx), sm_(sm_index), store_path_(ctx.engine, ctx.config.tma.store_bytes_per_cycle, &TmaUnit::on_store_sent, this) {}

Cycle TmaUnit::ready_at(const TensorMap& map, Cycle at) {
  Cycle ready = at + ctx_.config.tma.issue_cycles;
  if (std::find(known_maps_.begin(), known_maps_.end(), &map) == known_maps_.end()) {
    known_maps_.push_back(&map);
    ready += ctx_.config.tma.descriptor_fetch_latency;
  }
  return ready;
}

void TmaUnit::take_turn(std::uint64_t slot) {
  waiting_.push(slot);
  if (waiting_.size() == 1) serve();  // otherwise a turn is already scheduled
}

void TmaUnit::serve() {
  while (!waiting_.empty()) {
    const std::uint64_t slot = waiting_.front();
    const Cycle start = std::max(requests_[slot].unit_start, free_at_);
    if (start > ctx_.now() + ctx_.config.tma.issue_cycles) {
      ctx_.engine.schedule(start, &TmaUnit::on_turn, this, 0);
      return;
    }
    waiting_.pop();
    if (requests_[slot].kind == Kind::Load)
      send_load(slot, start);
    else
      send_store(slot, start);
  }
}

void TmaUnit::on_turn(void* unit, std::uint64_t) { static_cast<TmaUnit*>(unit)->serve(); }

Cycle TmaUnit::stream(Cycle start, Cycle cycles) {
  free_at_ = start + cycles;
  stats_.busy_cycles += cycles;
  return free_at_;
}

void TmaUnit::trace_request(const Request& r, const char* what, Cycle issue, Cycle start, Cycle end, Cycle done,
                            std::uint32_t bytes) {
  Tracer* t = ctx_.tracer_for(sm_);
  const std::string name = fmt::format("{} {}", what, coords_text(*r.map, r.coords));
  const std::string args = fmt::format(R"("bytes":{},"smem":{},"warp":{},"cta":{},"issue":{},"done":{})", bytes,
                                       r.smem, r.warp->index, r.cta->id(), issue, done);
  t->span(sm_, kTmaTrack, name, start, end - start, args);
  t->async_span(sm_, "tma", what, r.id, issue, done, args);
}

void TmaUnit::load(Cta& cta, WarpState& ws, const TensorMap& map, const TensorCoords& coords, std::uint32_t smem,
                   std::uint32_t barrier, TmaDestinations dests, Cycle at) {
  const std::uint64_t slot = requests_.put(
      Request{Kind::Load, &cta, &ws, &map, coords, smem, barrier, dests, 0, next_id_++, at, 0, ready_at(map, at), GmemWrite::Copy});
  cta.async_begin();
  if (ctx_.memory.load_gate().active()) ctx_.couple(Coupling::CpcGate, 0);
  if (ctx_.memory.load_gate().admit(static_cast<std::uint32_t>(sm_), map.box_bytes(), &TmaUnit::on_admitted, this, slot))
    take_turn(slot);
}

// The CPC had room again for a load that waited: it takes its turn at the unit from now.
void TmaUnit::on_admitted(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  Request& r = self.requests_[slot];
  const Cycle admitted = std::max(r.unit_start, self.ctx_.now());
  ++self.stats_.gated_loads;
  self.stats_.gate_wait_cycles += admitted - r.unit_start;
  r.unit_start = admitted;
  self.take_turn(slot);
}

void TmaUnit::send_load(std::uint64_t slot, Cycle start) {
  const Request& r = requests_[slot];
  const TensorMap& map = *r.map;
  const std::uint32_t bytes = map.box_bytes();
  // The box streams in as the L2 sends it: done once the unit and the L2 link (and the HBM link for
  // the bytes that missed) have moved it, plus the L2-hit latency. Bytes that missed reach the L2
  // hbm.latency after the request and stream on at the unit's slower miss rate; the unit itself
  // is held only for the streaming, so other requests overlap a miss's latency. Lines only the
  // other die's L2 half held come dies.far_hit_latency after the unit has streamed the box: its
  // last lines are far ones (the Hopper configs' promoted-box rows).
  const MemoryRead from_memory = ctx_.memory.read(static_cast<std::uint32_t>(sm_), map, r.coords, start);
  const Cycle from_l2 = from_memory.ready;
  ctx_.couple_at(Coupling::MemoryRequest, start);
  const std::uint64_t miss = std::min<std::uint64_t>(from_memory.miss_bytes, bytes);
  const double cycles = static_cast<double>(bytes - miss) / ctx_.config.tma.bytes_per_cycle +
                        static_cast<double>(miss) / ctx_.config.tma.miss_bytes_per_cycle;
  const Cycle end = stream(start, static_cast<Cycle>(std::ceil(cycles)));
  // One SM's boxes with misses also complete at most one per tma.miss_box_cycles, whatever their
  // size (our H100 rows: 16 and 32 KiB boxes alike).
  Cycle misses_in = 0;
  if (miss) {
    misses_in = start + ctx_.config.hbm.latency +
                static_cast<Cycle>(std::ceil(static_cast<double>(miss) / ctx_.config.tma.miss_bytes_per_cycle));
    if (misses_done_) misses_in = std::max(misses_in, misses_done_ + ctx_.config.tma.miss_box_cycles);
    misses_done_ = misses_in;
  }
  const bool multicast = r.dests.ranks != (1u << r.cta->rank());
  const Cycle far = from_memory.far_hits ? ctx_.config.dies.far_hit_latency : 0;
  const Cycle done = std::max({end + far, from_l2, misses_in}) + ctx_.config.tma.load_latency +
                     (multicast ? ctx_.config.tma.multicast_extra_latency : 0);
  ctx_.couple(Coupling::MemoryReply, done - start);  // the box lands
  if (multicast || (r.dests.to_pair_leader && r.cta->rank() % 2)) ctx_.couple_at(Coupling::Cluster, done);
  if (ctx_.tracer_for(sm_)) trace_request(r, multicast ? "tma.load.multicast" : "tma.load", r.issued, start, end, done, bytes);
  // The box's bytes take the destination SMs' SMEM bandwidth as they come back, spread over the
  // request's time from the unit to its completion (hw/sm/SmemBackground: ld/st.shared get what
  // is left).
  const double landing_rate = static_cast<double>(bytes) / static_cast<double>(std::max<Cycle>(1, done - start));
  for (std::uint32_t rank = 0; rank < r.cta->cluster().size(); ++rank)
    if (r.dests.ranks >> rank & 1u)
      r.cta->cluster().cta(rank).sm().smem_background().add(ctx_.now(), start, done, landing_rate,
                                                             SmemBackground::Source::Landing);
  ++stats_.loads;
  stats_.load_bytes += bytes;
  stats_.delivered_bytes += static_cast<std::uint64_t>(bytes) * std::popcount(r.dests.ranks);
  ctx_.engine.schedule(done, &TmaUnit::on_load_done, this, slot);
}

// The box lands at the same offset in every destination CTA; each signals complete_tx with the
// bytes that landed in it on its own barrier, or on its pair leader's.
void TmaUnit::on_load_done(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  const Request r = self.requests_.take(slot);
  const std::uint32_t bytes = r.map->box_bytes();
  const Cluster& cluster = r.cta->cluster();
  const char* op = "tma.load (data landing)";
  for (std::uint32_t rank = 0; rank < cluster.size(); ++rank) {
    if (!(r.dests.ranks >> rank & 1u)) continue;
    Cta& dest = cluster.cta(rank);
    if (&dest != r.cta) dest.check_resident_for(*r.warp, op);
    dest.check_no_live_barrier(*r.warp, op, r.smem, bytes);
    if (self.ctx_.functional()) copy_box_to_smem(*r.map, r.coords, self.ctx_.gmem, dest.smem().bytes(r.smem, bytes));
    Cta& signalled = r.dests.to_pair_leader ? cluster.cta(rank & ~1u) : dest;
    if (&signalled != r.cta) signalled.check_resident_for(*r.warp, op);
    const MBarrier& b = signalled.live_barrier(*r.warp, r.barrier, op);
    const std::uint64_t phase = b.phase();
    self.ctx_.race_check([&dest, &ws = *r.warp, smem = r.smem, &hb = signalled.cluster().hb(), o = b.hb_object,
                          index = b.hb_base + static_cast<HbClock>(phase)] {
      races::tma_landed(dest, ws, smem, HbPhase{hb.component_of(o), index});
    });
    signalled.barrier_apply(*r.warp, BarrierOp::CompleteTx, r.barrier, bytes, "tma.load complete_tx");
    if (b.phase() != phase)  // this load completed the phase: an arrow from its issue to the flip
      if (Tracer* t = self.ctx_.tracer_for(signalled.sm().index()))
        t->flow(static_cast<int>(r.cta->sm().index()), static_cast<int>(r.warp->trace_tid), r.issued,
                static_cast<int>(signalled.sm().index()), kBarrierTrack, self.ctx_.now(), "tma.load -> phase");
  }
  r.cta->async_end();
  if (self.ctx_.memory.load_gate().active()) self.ctx_.couple(Coupling::CpcGate, 0);
  self.ctx_.memory.load_gate().release(static_cast<std::uint32_t>(self.sm_), bytes);
}

void TmaUnit::store(Cta& cta, WarpState& ws, const TensorMap& map, const TensorCoords& coords, std::uint32_t smem,
                    Cycle at, GmemWrite how) {
  cta.async_begin();
  take_turn(requests_.put(Request{Kind::Store, &cta, &ws, &map, coords, smem, 0, {}, ws.bulk.add_op(), next_id_++, at,
                                  0, ready_at(map, at), how}));
}

void TmaUnit::send_store(std::uint64_t slot, Cycle start) {
  Request& r = requests_[slot];
  const TensorMap& map = *r.map;
  const bool add = r.how == GmemWrite::AddF32;
  const std::uint32_t bytes = map.box_bytes();
  const std::uint32_t bpc = ctx_.config.tma.bytes_per_cycle;
  const Cycle end = stream(start, (bytes + bpc - 1) / bpc);
  // The bytes leave the SM through its write path, slower than the unit reads SMEM (a stream of
  // stores is paced by it, the unit is not), its rate shared by the warps with stores in it
  // (WarpSharedPath), and the L2 takes them as they arrive. The SMEM read counts as done
  // (wait_group.read) store_latency after the last byte left, the write once the L2 took them all
  // (our H100 store rows: alone, the .read and the full wait take the same time). A reduction's
  // bytes take the path for longer (tma.reduce_bytes_per_cycle).
  const double path_bytes = add ? bytes * ctx_.config.tma.store_bytes_per_cycle / ctx_.config.tma.reduce_bytes_per_cycle
                                : bytes;
  const auto sm = static_cast<std::uint32_t>(sm_);
  r.l2_taken = add ? ctx_.memory.reduce(sm, map, r.coords, start) : ctx_.memory.write(sm, map, r.coords, start);
  ctx_.couple_at(Coupling::MemoryRequest, start);
  r.started = start;
  r.unit_end = end;
  const std::uint64_t written = map.gmem_bytes(in_bounds_elements(map, r.coords));
  ++(add ? stats_.reduces : stats_.stores);
  (add ? stats_.reduce_bytes : stats_.store_bytes) += written;
  store_path_.add(start, r.warp, slot, path_bytes);
}

void TmaUnit::on_store_sent(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  Request& r = self.requests_[slot];
  const Cycle now = self.ctx_.now();
  const Cycle sent = std::max(now, r.unit_end);
  r.l2_taken = std::max(sent, r.l2_taken);
  // The read ends with the bytes sent. (With every SM storing, silicon's reads wait for the L2's
  // write rate, epilogue_tolerances.csv; waiting for this store's place in the model's FIFO L2
  // link instead stalls a GEMM's epilogue behind every load queued there: the 16384^3 GEMM at
  // 1.98 GHz took 28.7M cycles instead of 16.6M.)
  const Cycle read = sent + self.ctx_.config.tma.store_latency;
  self.ctx_.couple(Coupling::MemoryReply, read - now);  // the write is done
  if (self.ctx_.tracer_for(self.sm_))
    self.trace_request(r, r.how == GmemWrite::AddF32 ? "tma.reduce.add" : "tma.store", r.issued, r.started, r.unit_end,
                       read, r.map->box_bytes());
  self.ctx_.engine.schedule(read, &TmaUnit::on_store_read, unit, slot);
}

void TmaUnit::on_store_read(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  const Request& r = self.requests_[slot];
  if (self.ctx_.functional())
    copy_box_to_gmem(*r.map, r.coords, r.cta->smem().bytes(r.smem, r.map->box_bytes()), self.ctx_.gmem, r.how);
  r.warp->bulk.read_done(r.group);
  r.cta->bulk_progress(*r.warp);
  self.ctx_.engine.schedule(std::max(self.ctx_.now(), r.l2_taken + self.ctx_.config.tma.store_latency),
                            &TmaUnit::on_store_written, unit, slot);
}

void TmaUnit::on_store_written(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  const Request r = self.requests_.take(slot);
  r.warp->bulk.write_done(r.group);
  r.cta->bulk_progress(*r.warp);
  r.cta->async_end();
}

void TmaUnit::prefetch(Cta&, WarpState& ws, const TensorMap& map, const TensorCoords& coords, Cycle at) {
  ctx_.memory.prefetch(static_cast<std::uint32_t>(sm_), map, coords, at + ctx_.config.tma.issue_cycles);
  ctx_.couple_at(Coupling::MemoryRequest, at + ctx_.config.tma.issue_cycles);
  ++stats_.prefetches;
  stats_.prefetch_bytes += map.box_bytes();
  if (ctx_.tracer_for(sm_))
    ctx_.tracer_for(sm_)->instant(sm_, kTmaTrack, fmt::format("tma.prefetch {}", coords_text(map, coords)), at,
                         fmt::format(R"("bytes":{},"warp":{})", map.box_bytes(), ws.index));
}

}  // namespace bwsim
