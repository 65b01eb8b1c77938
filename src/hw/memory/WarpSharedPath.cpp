#include "bwsim/hw/memory/WarpSharedPath.hpp"

#include <algorithm>
#include <cmath>

#include "bwsim/core/Engine.hpp"

namespace bwsim {
namespace {
// A store whose bytes left take under this many cycles at the whole rate is through (rates are
// fractional). plan() waits at least a cycle for any store that is not, so time always moves on.
constexpr double kThroughCycles = 1e-6;
}  // namespace

bool WarpSharedPath::first_of_its_warp(std::size_t i) const {
  for (std::size_t j = 0; j < i; ++j)
    if (stores_[j].warp == stores_[i].warp) return false;
  return true;
}

std::size_t WarpSharedPath::active_warps() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < stores_.size(); ++i) n += first_of_its_warp(i) ? 1 : 0;
  return n;
}

void WarpSharedPath::advance(Cycle to) {
  if (to <= updated_) return;
  if (!stores_.empty()) {
    const double moved = static_cast<double>(to - updated_) * bytes_per_cycle_ / static_cast<double>(active_warps());
    for (std::size_t i = 0; i < stores_.size(); ++i)
      if (first_of_its_warp(i)) stores_[i].left = std::max(0.0, stores_[i].left - moved);
  }
  updated_ = to;
}

void WarpSharedPath::add(Cycle at, const void* warp, std::uint64_t slot, double bytes) {
  advance(at);
  stores_.push_back(Store{warp, slot, bytes});
  plan();
}

void WarpSharedPath::plan() {
  if (stores_.empty()) return;
  double least = HUGE_VAL;
  for (std::size_t i = 0; i < stores_.size(); ++i)
    if (first_of_its_warp(i)) least = std::min(least, stores_[i].left);
  const double cycles = least * static_cast<double>(active_warps()) / bytes_per_cycle_;
  const auto wait = static_cast<Cycle>(std::ceil(std::max(0.0, cycles - kThroughCycles)));
  engine_.schedule(updated_ + wait, &WarpSharedPath::on_done, this, ++generation_);
}

void WarpSharedPath::on_done(void* self, std::uint64_t generation) {
  auto& p = *static_cast<WarpSharedPath*>(self);
  if (generation != p.generation_) return;  // an entry since has re-planned
  p.advance(p.engine_.now());
  // Every warp's first store whose bytes are through leaves, in the order they entered.
  std::vector<std::uint64_t>& through = p.through_;
  through.clear();
  p.leaves_.assign(p.stores_.size(), 0);
  for (std::size_t i = 0; i < p.stores_.size(); ++i)
    p.leaves_[i] = p.stores_[i].left <= p.bytes_per_cycle_ * kThroughCycles && p.first_of_its_warp(i) ? 1 : 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < p.stores_.size(); ++i) {
    if (p.leaves_[i]) {
      through.push_back(p.stores_[i].slot);
      continue;
    }
    p.stores_[kept++] = p.stores_[i];
  }
  p.stores_.resize(kept);
  p.plan();
  for (const std::uint64_t slot : through) p.done_(p.owner_, slot);
}

}  // namespace bwsim
