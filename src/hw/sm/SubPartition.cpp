#include "bwsim/hw/sm/SubPartition.hpp"

#include <algorithm>
#include <cmath>

#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/sm/WarpState.hpp"

namespace bwsim {

namespace {
// A block whose work is within this of done is done (rates are ratios of small integers).
constexpr double kDone = 1e-6;
}  // namespace

void SubPartition::start(Cta& cta, WarpState& ws, const CoreBlockProfile& block, CorePipeStats& stats) {
  for (std::size_t pipe = 0; pipe < kCorePipes; ++pipe) stats.busy_cycles(static_cast<CorePipe>(pipe)) += block.pipe_cycles[pipe];
  stats.issue_cycles += block.issue_cycles;
  advance();
  running_.push_back({&cta, &ws, &block, 0, static_cast<double>(block.segments.front().cycles), 0.0});
  plan();
}

void SubPartition::advance() {
  const Cycle now = ctx_.now();
  const auto elapsed = static_cast<double>(now - updated_);
  if (running_.size() == 1) {
    // Alone, a block runs at its standalone speed through all its segments (plan() scheduled no
    // event at their ends): walk it to the segment it is in now.
    Running& r = running_.front();
    double left = elapsed;
    while (left > r.remaining + kDone && r.segment + 1 < r.block->segments.size()) {
      left -= r.remaining;
      r.remaining = static_cast<double>(r.block->segments[++r.segment].cycles);
    }
    r.remaining -= left;
  } else {
    for (Running& r : running_) r.remaining -= elapsed * r.rate;
  }
  updated_ = now;
}

void SubPartition::share() {
  constexpr std::size_t kResources = kCoreResources;
  if (running_.size() == 1) {  // alone: the filling below in its one step, min(1, 1 / demand)
    Running& r = running_.front();
    double rate = 1;
    for (std::size_t k = 0; k < kResources; ++k)
      if (r.demand()[k] > 0) rate = std::min(rate, 1 / r.demand()[k]);
    r.rate = rate;
    return;
  }
  CoreDemand free;
  free.fill(1.0);
  for (Running& r : running_) r.rate = -1;  // rising
  double level = 0;
  for (;;) {
    // The rising blocks' summed demand; the common rise until a resource is full or speed 1.
    CoreDemand rising{};
    bool any = false;
    for (const Running& r : running_)
      if (r.rate < 0) {
        any = true;
        for (std::size_t k = 0; k < kResources; ++k) rising[k] += r.demand()[k];
      }
    if (!any) return;
    double rise = 1 - level;
    for (std::size_t k = 0; k < kResources; ++k)
      if (rising[k] > 0) rise = std::min(rise, free[k] / rising[k]);
    level += rise;
    for (std::size_t k = 0; k < kResources; ++k) free[k] -= rise * rising[k];
    const bool top = level >= 1 - kDone;
    for (Running& r : running_) {
      if (r.rate >= 0) continue;
      bool stops = top;
      for (std::size_t k = 0; k < kResources && !stops; ++k) stops = r.demand()[k] > 0 && free[k] <= kDone;
      if (stops) r.rate = level;
    }
  }
}

void SubPartition::plan() {
  if (running_.empty()) return;
  share();
  double next = running_.front().remaining / running_.front().rate;
  if (running_.size() == 1) {  // alone: to the end of its work, over the segments (see advance)
    const Running& r = running_.front();
    for (std::size_t k = r.segment + 1; k < r.block->segments.size(); ++k)
      next += static_cast<double>(r.block->segments[k].cycles);
  } else {
    for (const Running& r : running_) next = std::min(next, r.remaining / r.rate);
  }
  const auto wait = static_cast<Cycle>(std::ceil(std::max(0.0, next - kDone)));
  ctx_.engine.schedule(ctx_.now() + wait, &SubPartition::on_finish, this, ++generation_);
}

void SubPartition::on_finish(void* self, std::uint64_t generation) {
  auto& sp = *static_cast<SubPartition*>(self);
  if (generation != sp.generation_) return;  // a start or finish since has re-planned
  sp.advance();
  const Cycle now = sp.ctx_.now();
  // A block at the end of a segment moves to the next (a lone block is already in its last: see
  // advance); finished blocks leave in the order they started (a deterministic wake order); the
  // others keep theirs.
  std::size_t kept = 0;
  for (Running& r : sp.running_) {
    if (r.remaining <= kDone && r.segment + 1 < r.block->segments.size())
      r.remaining = static_cast<double>(r.block->segments[++r.segment].cycles);
    if (r.remaining > kDone) {
      sp.running_[kept++] = r;
      continue;
    }
    WarpState& ws = *r.ws;
    // The warp's time in the block: its issue slots, the rest computing (on_resume adds that).
    ws.account(Activity::Issue, r.block->issue_cycles);
    ws.wait_since += r.block->issue_cycles;
    ws.instructions += r.block->instructions - 1;  // on_resume counts one
    r.cta->wake(ws, now + r.block->drain);
  }
  sp.running_.resize(kept);
  sp.plan();
}

}  // namespace bwsim
