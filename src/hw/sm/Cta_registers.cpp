// The CTA's register pool: setmaxnreg.inc / .dec (PTX: N in 24..256, a multiple of 8, executed
// by every warp of a warpgroup with the same N; .inc blocks until the pool has the registers).
#include <fmt/format.h>

#include <algorithm>

#include "bwsim/hw/sm/Cta.hpp"

namespace bwsim {

void Cta::setmaxnreg_check(WarpState& ws, const char* op, std::uint32_t n, bool inc) {
  if (n < 24 || n > 256 || n % 8 != 0)
    fail(Rule::SetmaxnregMisuse, ws, op, fmt::format("{} registers per thread: must be a multiple of 8 in 24..256", n),
         "use a register count the ISA allows");
  if (inc ? n < ws.registers : n > ws.registers)
    fail(Rule::SetmaxnregMisuse, ws, op,
         fmt::format("the warp has {} registers per thread; {} to {} would {} them", ws.registers,
                     inc ? ".inc" : ".dec", n, inc ? "lower" : "raise"),
         inc ? "use setmaxnreg.dec to give registers back" : "use setmaxnreg.inc to get more registers");
  if (!inc && n < ws.accumulator_registers)
    fail(Rule::SetmaxnregMisuse, ws, op,
         fmt::format("the warp's live wgmma accumulators hold {} registers per thread; .dec to {} would drop them",
                     ws.accumulator_registers, n),
         "release (destroy) the accumulators first, or keep more registers");
  auto& rounds = warpgroup_rounds_[ws.index / 4];
  const std::uint32_t k = ws.setmaxnreg_count++;
  if (k == rounds.size()) {
    rounds.push_back(SetmaxnregRound{n, inc});
  } else if (rounds[k].n != n || rounds[k].inc != inc) {
    fail(Rule::SetmaxnregMisuse, ws, op,
         fmt::format("warpgroup {} disagrees: another warp's setmaxnreg #{} was .{} {}, this warp's is .{} {}",
                     ws.index / 4, k, rounds[k].inc ? "inc" : "dec", rounds[k].n, inc ? "inc" : "dec", n),
         "every warp of a warpgroup executes the same setmaxnreg");
  }
}

bool Cta::try_take_registers(WarpState& ws) {
  const auto n = static_cast<std::uint32_t>(ws.wait_value);
  const std::uint32_t need = (n - ws.registers) * 32;
  if (need > registers_free_) return false;
  registers_free_ -= need;
  ws.registers = n;
  return true;
}

void Cta::registers_release(WarpState& ws, std::uint32_t n) {
  registers_free_ += (ws.registers - n) * 32;
  ws.registers = n;
  for (std::size_t i = 0; i < register_waiters_.size();) {
    WarpState& w = *register_waiters_[i];
    if (try_take_registers(w)) {
      register_waiters_.erase(register_waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      wake(w, ctx_.now() + ctx_.config.warp.issue_cycles);
    } else {
      ++i;
    }
  }
}

}  // namespace bwsim
