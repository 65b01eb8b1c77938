// The CTA's tensor-memory rules: allocation, deallocation, access checks (PTX tcgen05.alloc,
// dealloc, relinquish_alloc_permit; the lane-quadrant rule of tcgen05.ld/st).
#include <fmt/format.h>

#include <cstring>

#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/sm/Sm.hpp"

namespace bwsim {

void Cta::tmem_check_alloc_size(WarpState& ws, const char* op, std::uint32_t ncols) {
  const std::uint32_t max = sm_.tmem().columns();
  if (ncols < kTmemGranule || ncols > max || (ncols & (ncols - 1)) != 0)
    fail(Rule::TmemAllocMisuse, ws, op, fmt::format("{} columns requested; must be a power of 2 in 32..{}", ncols, max),
         "allocate 32, 64, 128, 256 or 512 columns");
}

bool Cta::tmem_try_alloc(WarpState& ws) {
  const char* op = "tcgen05.alloc";
  if (tmem_relinquished_)
    fail(Rule::TmemAllocMisuse, ws, op, "the CTA already executed tcgen05.relinquish_alloc_permit",
         "allocate everything before relinquishing the permit");
  if (ws.pair_alloc) return tmem_try_pair_alloc(ws);
  const auto ncols = static_cast<std::uint32_t>(ws.wait_value);
  const std::int64_t column = sm_.tmem().try_allocate(*this, ncols);
  if (column < 0) return false;
  tmem_alloc_done(ws, static_cast<std::uint32_t>(column));
  return true;
}

void Cta::trace_tmem_in_use() const {
  if (Tracer* t = tracer())
    t->counter(static_cast<int>(sm_.index()), "TMEM columns in use", ctx_.now(),
               sm_.tmem().columns() - sm_.tmem().free_columns());
}

void Cta::tmem_alloc_done(WarpState& ws, std::uint32_t column) {
  const TmemAddr addr = TmemAddr::at(0, column);
  std::memcpy(smem_.bytes(ws.wait_slot, 4).data(), &addr.raw, 4);  // the ISA writes the address to SMEM
  ws.token_result = addr.raw;
  trace_tmem_in_use();
  if (tracer())
    tracer()->instant(static_cast<int>(sm_.index()), static_cast<int>(ws.trace_tid),
                      fmt::format("tcgen05.alloc{} {} columns at column {}", ws.pair_alloc ? ".cta_group::2" : "",
                                  ws.wait_value, column),
                      ctx_.now());
}

// tcgen05.alloc.cta_group::2: one warp of each CTA of the pair; the first waits for the second,
// which allocates the same columns in both SMs' TMEM (their allocation histories are identical,
// every tcgen05 instruction of a kernel having the same cta_group).
bool Cta::tmem_try_pair_alloc(WarpState& ws) {
  const char* op = "tcgen05.alloc.cta_group::2";
  WarpState*& partner = cluster_.pair_alloc_waiter(rank_ / 2);
  if (!partner || partner == &ws) {
    partner = &ws;
    return false;
  }
  WarpState& other = *partner;
  partner = nullptr;
  if (other.cta == this)
    fail(Rule::CtaPairMisuse, ws, op, fmt::format("warps {} and {} of the same CTA both allocate", other.index, ws.index),
         "one warp of each CTA of the pair performs the cta_group::2 allocation");
  if (other.wait_value != ws.wait_value)
    fail(Rule::TmemAllocMisuse, ws, op,
         fmt::format("this CTA allocates {} columns, its peer {}", ws.wait_value, other.wait_value),
         "both CTAs of the pair allocate the same number of columns");
  const auto ncols = static_cast<std::uint32_t>(ws.wait_value);
  const std::int64_t mine = sm_.tmem().try_allocate(*this, ncols);
  const std::int64_t theirs = other.cta->sm_.tmem().try_allocate(*other.cta, ncols);
  if (mine < 0 || theirs < 0 || mine != theirs)
    fail(Rule::TmemAllocMisuse, ws, op,
         fmt::format("{} columns are not free at the same place in both SMs ({} and {} free)", ncols,
                     sm_.tmem().free_columns(), other.cta->sm_.tmem().free_columns()),
         "a cta_group::2 allocation that has to wait for a dealloc is not modeled; free columns first");
  tmem_alloc_done(ws, static_cast<std::uint32_t>(mine));
  other.cta->tmem_alloc_done(other, static_cast<std::uint32_t>(mine));
  other.cta->wake(other, ctx_.now() + ctx_.config.warp.issue_cycles);
  return true;
}

void Cta::tmem_dealloc_at(WarpState& ws, Cycle at, std::uint32_t column, std::uint32_t ncols) {
  async_begin();
  ctx_.engine.schedule(at, &Cta::on_tmem_dealloc, &ws, (static_cast<std::uint64_t>(column) << 32) | ncols);
}

void Cta::on_tmem_dealloc(void* wsp, std::uint64_t packed) {
  auto& ws = *static_cast<WarpState*>(wsp);
  Cta& cta = *ws.cta;
  const auto column = static_cast<std::uint32_t>(packed >> 32);
  const auto ncols = static_cast<std::uint32_t>(packed);
  Tmem& tmem = cta.sm_.tmem();
  if (!tmem.release(cta, column, ncols))
    cta.fail(Rule::TmemAllocMisuse, ws, "tcgen05.dealloc",
             fmt::format("columns [{}, {}) are not allocated to this CTA", column, column + ncols),
             "dealloc exactly the address and column count an earlier tcgen05.alloc returned");
  cta.trace_tmem_in_use();
  // Retry blocked allocations, oldest first.
  for (std::size_t i = 0; i < tmem.waiters().size();) {
    WarpState& w = *tmem.waiters()[i];
    if (w.cta->tmem_try_alloc(w)) {
      tmem.remove_waiter(w);
      w.cta->wake(w, cta.ctx_.now() + cta.ctx_.config.warp.issue_cycles);
    } else {
      ++i;
    }
  }
  cta.async_end();
}

void Cta::tmem_relinquish(WarpState&) { tmem_relinquished_ = true; }

void Cta::tmem_check_access(WarpState& ws, const char* op, std::uint32_t lane, std::uint32_t lanes,
                            std::uint32_t column, std::uint32_t ncols, bool quadrant) {
  const std::uint32_t q = ws.index % 4;
  if (lane + lanes > kTmemLanes || !sm_.tmem().owned_by(*this, column, ncols) ||
      (quadrant && (lane < 32 * q || lane + lanes > 32 * q + 32))) [[unlikely]]
    tmem_access_failed(ws, op, lane, lanes, column, ncols);
}

void Cta::tmem_access_failed(WarpState& ws, const char* op, std::uint32_t lane, std::uint32_t lanes,
                             std::uint32_t column, std::uint32_t ncols) const {
  if (lane + lanes > kTmemLanes || !sm_.tmem().owned_by(*this, column, ncols))
    fail(Rule::TmemOutOfAllocation, ws, op,
         fmt::format("lanes [{}, {}) x columns [{}, {}) are not all allocated to this CTA", lane, lane + lanes, column,
                     column + ncols),
         "stay inside the columns tcgen05.alloc returned");
  const std::uint32_t q = ws.index % 4;
  fail(Rule::TmemLaneQuadrant, ws, op,
       fmt::format("warp {} may access TMEM lanes {}..{} only (warp id % 4 = {}), not [{}, {})", ws.index, 32 * q,
                   32 * q + 31, q, lane, lane + lanes),
       "let warp w of a warpgroup read lanes 32*(w%4) .. 32*(w%4)+31");
}

void Cta::check_tmem_released() {
  const std::uint32_t held = sm_.tmem().held_by(*this);
  if (held && last_warp_)
    fail(Rule::TmemAllocMisuse, *last_warp_, "CTA exit",
         fmt::format("the CTA exits with {} TMEM columns still allocated", held),
         "tcgen05.dealloc every allocation before the CTA's warps finish");
}

}  // namespace bwsim
