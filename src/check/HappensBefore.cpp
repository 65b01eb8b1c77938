#include "bwsim/check/HappensBefore.hpp"

#include <stdexcept>

namespace bwsim {

void HappensBefore::add_warp(HbWarp& w) {
  w.release_component = components_++;
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
  // A commit orders the warp's earlier tcgen05 operations for whoever observes its arrival, not
  // for the warp itself (it knows of their completion only by waiting on the barrier too).
  if (kind == HbWarp::Arrival::Commit && w.commit_component == kNoHbObject) w.commit_component = components_++;
  const HbClock commits = kind == HbWarp::Arrival::Commit ? ++w.commits : 0;
  w.in_flight.push_back(HbWarp::InFlight{target, offset, kind, w.releases, commits});
}

void HappensBefore::acquire(HbWarp& w, std::uint32_t object) {
  std::uint32_t slot = HbWarp::kPresent;
  for (HbWarp::InFlight& a : w.in_flight) {
    if (a.snapshot != HbWarp::kPresent) continue;
    if (slot == HbWarp::kPresent) {
      slot = snapshots_.acquire();
      snapshots_[slot].clock.assign(w.clock);
    }
    a.snapshot = slot;
    ++snapshots_[slot].users;
  }
  w.clock.join(objects_[object].done);
}

void HappensBefore::landed(HbWarp& w, const void* target, std::uint32_t offset, HbWarp::Arrival kind,
                           std::uint32_t object) {
  for (auto it = w.in_flight.begin(); it != w.in_flight.end(); ++it)
    if (it->target == target && it->offset == offset && it->kind == kind) {
      // The clock it was issued with: its snapshot, or the warp's own (no acquire since), either
      // with the warp's release count as of the arrival.
      VectorClock& pending = objects_[object].pending;
      if (it->snapshot == HbWarp::kPresent) {
        pending.join_setting(w.clock, w.release_component, it->releases);
      } else {
        Snapshot& s = snapshots_[it->snapshot];
        pending.join_setting(s.clock, w.release_component, it->releases);
        if (--s.users == 0) snapshots_.release(it->snapshot);
      }
      if (kind == HbWarp::Arrival::Commit) pending.raise(w.commit_component, it->commits);
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
