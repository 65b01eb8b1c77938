#include "bwsim/hw/TmaUnit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bwsim/hw/Cta.hpp"
#include "bwsim/hw/TensorCopy.hpp"

namespace bwsim {
namespace {
std::string coords_text(const TensorMap& map, const TensorCoords& c) {
  std::string s = "(";
  for (std::uint32_t i = 0; i < map.rank(); ++i) s += fmt::format("{}{}", i ? "," : "", c[i]);
  return s + ")";
}
}  // namespace

TmaUnit::TmaUnit(SimContext& ctx, int sm_index) : ctx_(ctx), sm_(sm_index) {}

Cycle TmaUnit::stream(Cycle arrival, std::uint32_t bytes, Cycle& start) {
  const std::uint32_t bpc = ctx_.config.tma.bytes_per_cycle;
  const Cycle cycles = (bytes + bpc - 1) / bpc;
  start = std::max(arrival, free_at_);
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
  t->async_begin(sm_, "tma", what, r.id, issue, args);
  t->async_end(sm_, "tma", what, r.id, done);
}

void TmaUnit::load(Cta& cta, WarpState& ws, const TensorMap& map, const TensorCoords& coords, std::uint32_t smem,
                   std::uint32_t barrier, Cycle at) {
  const std::uint32_t bytes = map.box_bytes();
  Cycle start = 0;
  const Cycle end = stream(at + ctx_.config.tma.issue_cycles, bytes, start);
  const Cycle done = end + ctx_.config.tma.load_latency;
  Request r{Kind::Load, &cta, &ws, &map, coords, smem, barrier, 0, next_id_++};
  if (ctx_.tracer_for(sm_)) trace_request(r, "tma.load", at, start, end, done, bytes);
  ++stats_.loads;
  stats_.load_bytes += bytes;
  cta.async_begin();
  ctx_.engine.schedule(done, &TmaUnit::on_load_done, this, requests_.put(r));
}

void TmaUnit::on_load_done(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  const Request r = self.requests_.take(slot);
  Cta& cta = *r.cta;
  const std::uint32_t bytes = r.map->box_bytes();
  cta.check_no_live_barrier(*r.warp, "tma.load (data landing)", r.smem, bytes);
  if (self.ctx_.functional()) copy_box_to_smem(*r.map, r.coords, self.ctx_.gmem, cta.smem().bytes(r.smem, bytes));
  cta.barrier_apply(*r.warp, BarrierOp::CompleteTx, r.barrier, bytes, "tma.load complete_tx");
  cta.async_end();
}

void TmaUnit::store(Cta& cta, WarpState& ws, const TensorMap& map, const TensorCoords& coords, std::uint32_t smem,
                    Cycle at) {
  const std::uint32_t bytes = map.box_bytes();
  Cycle start = 0;
  const Cycle end = stream(at + ctx_.config.tma.issue_cycles, bytes, start);
  Request r{Kind::Store, &cta, &ws, &map, coords, smem, 0, ws.bulk.add_op(), next_id_++};
  if (ctx_.tracer_for(sm_)) trace_request(r, "tma.store", at, start, end, end + ctx_.config.tma.store_latency, bytes);
  ++stats_.stores;
  stats_.store_bytes += in_bounds_elements(map, coords) * size_of(map.dtype());
  cta.async_begin();
  ctx_.engine.schedule(end, &TmaUnit::on_store_read, this, requests_.put(r));
}

void TmaUnit::on_store_read(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  const Request& r = self.requests_[slot];
  if (self.ctx_.functional())
    copy_box_to_gmem(*r.map, r.coords, r.cta->smem().bytes(r.smem, r.map->box_bytes()), self.ctx_.gmem);
  r.warp->bulk.read_done(r.group);
  r.cta->bulk_progress(*r.warp);
  self.ctx_.engine.schedule(self.ctx_.now() + self.ctx_.config.tma.store_latency, &TmaUnit::on_store_written, unit,
                            slot);
}

void TmaUnit::on_store_written(void* unit, std::uint64_t slot) {
  auto& self = *static_cast<TmaUnit*>(unit);
  const Request r = self.requests_.take(slot);
  r.warp->bulk.write_done(r.group);
  r.cta->bulk_progress(*r.warp);
  r.cta->async_end();
}

void TmaUnit::prefetch(Cta&, WarpState& ws, const TensorMap& map, const TensorCoords& coords, Cycle at) {
  ++stats_.prefetches;
  stats_.prefetch_bytes += map.box_bytes();
  if (ctx_.tracer_for(sm_))
    ctx_.tracer_for(sm_)->instant(sm_, kTmaTrack, fmt::format("tma.prefetch {}", coords_text(map, coords)), at,
                         fmt::format(R"("bytes":{},"warp":{})", map.box_bytes(), ws.index));
}

}  // namespace bwsim
