// The CTA's tensor-memory rules: allocation, deallocation, access checks (PTX tcgen05.alloc,
// dealloc, relinquish_alloc_permit; the lane-quadrant rule of tcgen05.ld/st).
#include <fmt/format.h>

#include <cstring>

#include "bwsim/hw/Cta.hpp"
#include "bwsim/hw/Sm.hpp"

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
  const auto ncols = static_cast<std::uint32_t>(ws.wait_value);
  const std::int64_t column = sm_.tmem().try_allocate(*this, ncols);
  if (column < 0) return false;
  const TmemAddr addr = TmemAddr::at(0, static_cast<std::uint32_t>(column));
  std::memcpy(smem_.bytes(ws.wait_slot, 4).data(), &addr.raw, 4);  // the ISA writes the address to SMEM
  ws.token_result = addr.raw;
  if (tracer())
    tracer()->instant(static_cast<int>(sm_.index()), static_cast<int>(ws.index),
                         fmt::format("tcgen05.alloc {} columns at column {}", ncols, column), ctx_.now());
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
  if (lane + lanes > kTmemLanes || !sm_.tmem().owned_by(*this, column, ncols))
    fail(Rule::TmemOutOfAllocation, ws, op,
         fmt::format("lanes [{}, {}) x columns [{}, {}) are not all allocated to this CTA", lane, lane + lanes, column,
                     column + ncols),
         "stay inside the columns tcgen05.alloc returned");
  if (quadrant) {
    const std::uint32_t q = ws.index % 4;
    if (lane < 32 * q || lane + lanes > 32 * q + 32)
      fail(Rule::TmemLaneQuadrant, ws, op,
           fmt::format("warp {} may access TMEM lanes {}..{} only (warp id % 4 = {}), not [{}, {})", ws.index, 32 * q,
                       32 * q + 31, q, lane, lane + lanes),
           "let warp w of a warpgroup read lanes 32*(w%4) .. 32*(w%4)+31");
  }
}

void Cta::check_tmem_released() {
  const std::uint32_t held = sm_.tmem().held_by(*this);
  if (held && last_warp_)
    fail(Rule::TmemAllocMisuse, *last_warp_, "CTA exit",
         fmt::format("the CTA exits with {} TMEM columns still allocated", held),
         "tcgen05.dealloc every allocation before the CTA's warps finish");
}

}  // namespace bwsim
