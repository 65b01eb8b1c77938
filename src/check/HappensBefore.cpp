#include "bwsim/check/HappensBefore.hpp"

#include <stdexcept>

namespace bwsim {

void HappensBefore::add_warp(HbWarp& w) {
  w.release_component = components_++;
  w.commit_component = components_++;
}

std::uint32_t HappensBefore::add_object() {
  objects_.push_back(Object{components_++, {}, {}});
  return static_cast<std::uint32_t>(objects_.size() - 1);
}

void HappensBefore::release_now(HbWarp& w, std::uint32_t object) {
  w.clock.raise(w.release_component, ++w.releases);
  objects_[object].pending.join(w.clock);
}

void HappensBefore::release_later(HbWarp& w, const void* target, std::uint32_t offset, HbWarp::Arrival kind) {
  w.clock.raise(w.release_component, ++w.releases);
  const std::uint32_t slot = snapshots_.acquire();
  VectorClock& s = snapshots_[slot];
  s.assign(w.clock);
  // A commit orders the warp's earlier tcgen05 operations for whoever observes its arrival, not
  // for the warp itself (it knows of their completion only by waiting on the barrier too).
  if (kind == HbWarp::Arrival::Commit) s.raise(w.commit_component, ++w.commits);
  w.in_flight.push_back(HbWarp::InFlight{target, offset, kind, slot});
}

void HappensBefore::landed(HbWarp& w, const void* target, std::uint32_t offset, HbWarp::Arrival kind,
                           std::uint32_t object) {
  for (auto it = w.in_flight.begin(); it != w.in_flight.end(); ++it)
    if (it->target == target && it->offset == offset && it->kind == kind) {
      objects_[object].pending.join(snapshots_[it->snapshot]);
      snapshots_.release(it->snapshot);
      w.in_flight.erase(it);
      return;
    }
  throw std::logic_error("happens-before: an arrival landed that was never issued");
}

void HappensBefore::completed(std::uint32_t object, HbClock completed) {
  Object& o = objects_[object];
  o.pending.raise(o.component, completed);
  o.done.assign(o.pending);
}

}  // namespace bwsim
