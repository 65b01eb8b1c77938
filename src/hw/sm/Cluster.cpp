#include "bwsim/hw/sm/Cluster.hpp"

#include <algorithm>

#include "bwsim/check/RaceChecker.hpp"
#include "bwsim/hw/sm/Cta.hpp"

namespace bwsim {

Cluster::Cluster(SimContext& ctx, std::uint32_t id, ClusterShape shape)
    : ctx_(ctx), id_(id), shape_(shape), barrier_hb_object_(new_hb_object()), pair_alloc_(shape.size() / 2 + 1, nullptr) {
  ctas_.reserve(shape.size());
}

std::uint32_t Cluster::new_hb_object() {
  ctx_.race_check([&hb = hb_] { hb.add_object(); });
  return hb_objects_++;
}

bool Cluster::finished() const {
  for (const Cta* c : ctas_)
    if (!c->finished()) return false;
  return true;
}

void Cluster::barrier_arrive(WarpState& ws, Cycle ready_at) {
  ws.cluster_arrived = true;
  ws.cluster_arrive_phase = phase_;
  ready_at_ = std::max(ready_at_, ready_at);
  // barrier.cluster.arrive releases (the default .release); .relaxed orders nothing.
  if (ws.cluster_arrive_release) ctx_.race_check([&hb = hb_, &w = ws.hb, o = barrier_hb_object_] { hb.release_now(w, o); });
  ++arrived_;
  complete_phase_if_done();
}

void Cluster::warp_exited(WarpState& ws) {
  --live_warps_;
  if (ws.cluster_arrived && ws.cluster_arrive_phase == phase_) --arrived_;  // its arrival leaves with it
  complete_phase_if_done();
}

void Cluster::add_barrier_waiter(WarpState& ws) {
  ws.next_waiter = waiters_;
  waiters_ = &ws;
}

void Cluster::complete_phase_if_done() {
  if (arrived_ == 0 || arrived_ < live_warps_) return;
  ++phase_;
  arrived_ = 0;
  for (Cta* c : ctas_) c->publish_barrier_inits();
  ctx_.race_check([&hb = hb_, o = barrier_hb_object_, n = static_cast<HbClock>(phase_)] { hb.completed(o, n); });
  wake_at_ = std::max(ctx_.now(), ready_at_) + ctx_.config.cluster.barrier_latency;
  ready_at_ = 0;
  for (WarpState* w = waiters_; w;) {
    WarpState* next = w->next_waiter;
    w->next_waiter = nullptr;
    barrier_observed(*w);
    w->cta->wake(*w, wake_at_);
    w = next;
  }
  waiters_ = nullptr;
}

void Cluster::barrier_observed(WarpState& ws) {
  ctx_.race_check([&hb = hb_, &w = ws.hb, o = barrier_hb_object_] { hb.acquire(w, o); });
}

std::uint32_t Cluster::put_store(WarpState& ws, Cycle at, std::uint32_t rank, std::uint32_t offset,
                                 std::span<const std::byte> data, std::int64_t barrier) {
  const std::uint32_t slot = stores_.acquire();
  DsmemStore& s = stores_[slot];
  s.ws = &ws;
  s.rank = rank;
  s.offset = offset;
  s.bytes.assign(data.begin(), data.end());
  s.barrier = barrier;
  ws.cta->async_begin();  // the storing CTA (and so the cluster) stays until the bytes land
  if (rank != ws.cta->rank()) ctx_.couple_at(Coupling::Cluster, at);
  ctx_.engine.schedule(at, &Cluster::on_dsmem_store, this, slot);
  return slot;
}

void Cluster::dsmem_store_at(WarpState& ws, Cycle at, std::uint32_t rank, std::uint32_t offset,
                             std::span<const std::byte> data) {
  put_store(ws, at, rank, offset, data, -1);
}

void Cluster::bulk_copy_at(WarpState& ws, Cycle at, std::uint32_t rank, std::uint32_t offset,
                           std::span<const std::byte> data, std::uint32_t barrier) {
  put_store(ws, at, rank, offset, data, barrier);
}

void Cluster::on_dsmem_store(void* cluster, std::uint64_t slot) {
  auto& self = *static_cast<Cluster*>(cluster);
  DsmemStore& s = self.stores_[slot];
  const bool bulk = s.barrier >= 0;
  const char* op = bulk ? "cp.async.bulk.shared::cluster (bytes landing)" : "st.shared::cluster (bytes landing)";
  Cta& target = self.cta(s.rank);
  const auto len = static_cast<std::uint32_t>(s.bytes.size());
  if (&target != s.ws->cta) target.check_resident_for(*s.ws, op);
  target.check_no_live_barrier(*s.ws, op, s.offset, len);
  std::copy(s.bytes.begin(), s.bytes.end(), target.smem().bytes(s.offset, len).begin());
  if (bulk) {
    const auto bar = static_cast<std::uint32_t>(s.barrier);
    const MBarrier& b = target.live_barrier(*s.ws, bar, op);
    self.ctx_.race_check([&target, &ws = *s.ws, offset = s.offset, &hb = self.hb_, o = b.hb_object,
                          index = b.hb_base + static_cast<HbClock>(b.phase())] {
      races::tma_landed(target, ws, offset, HbPhase{hb.component_of(o), index});
    });
    target.barrier_apply(*s.ws, BarrierOp::CompleteTx, bar, len, "cp.async.bulk complete_tx");
  }
  self.stores_.release(slot);
  s.ws->cta->async_end();
}

}  // namespace bwsim
