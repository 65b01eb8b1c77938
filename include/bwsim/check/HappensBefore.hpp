#pragma once
// The happens-before relation of one cluster, as vector clocks (what the race checker orders
// accesses by). Its components, all numbered densely per cluster:
//   - per warp, its release count (every arrival it makes: mbarrier arrive, commit, bar.sync /
//     bar.arrive, barrier.cluster.arrive) and its commit count (tcgen05.commit: the completion
//     of the warp's earlier asynchronous tcgen05 operations);
//   - per synchronisation object (an mbarrier slot, a named barrier, the cluster barrier), the
//     number of its phases completed (an mbarrier keeps counting across re-initialisations).
// A warp's clock says what it knows: the releases of every warp and the phases of every object
// that are ordered before its present. An arrival carries the clock its warp had when it issued
// it (a snapshot: remote arrivals and commits land later) into the object's pending clock; a
// completed phase publishes the pending clock; a wait that passes joins it into the waiter's.
// An object's clock is cumulative: observing phase p orders after every arrival of phases <= p
// (a release sequence of the PTX memory model).
//
// Cost: a join is O(components); with W warps (C of them committing) and S objects in a cluster
// each warp holds W + C + S clocks and each object two vectors of as many (the attention CTA:
// 16 warps, one committing, 36 barriers: 53 components, 68 while every warp had a commit one).
// An arrival in flight needs its warp's clock as of its issue. Until the warp's next acquire that
// clock is the warp's present one but for the warp's own release count (which the arrival notes),
// so it is copied only when the warp acquires while arrivals are in flight, once for all of them
// (fmha: 30% of acquires, against a copy per arrival). Snapshots are pooled, so steady state
// allocates nothing.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "bwsim/core/SlotPool.hpp"

namespace bwsim {

using HbClock = std::uint32_t;
inline constexpr std::uint32_t kNoHbObject = ~0u;  // a synchronisation object not yet given its clocks

class VectorClock {
 public:
  HbClock operator[](std::uint32_t i) const { return i < c_.size() ? c_[i] : 0; }
  void raise(std::uint32_t i, HbClock v) {
    if (i >= c_.size()) c_.resize(i + 1, 0);
    c_[i] = std::max(c_[i], v);
  }
  void join(const VectorClock& o) {
    if (o.c_.size() > c_.size()) c_.resize(o.c_.size(), 0);
    for (std::size_t i = 0; i < o.c_.size(); ++i) c_[i] = std::max(c_[i], o.c_[i]);
  }
  void assign(const VectorClock& o) { c_.assign(o.c_.begin(), o.c_.end()); }  // keeps capacity
  // Joins `o` but for component `skip`, which it raises to `v`.
  void join_setting(const VectorClock& o, std::uint32_t skip, HbClock v) {
    raise(skip, v);
    const HbClock kept = c_[skip];
    join(o);
    c_[skip] = kept;
  }

 private:
  std::vector<HbClock> c_;
};

// A phase of a synchronisation object: known complete by whoever's clock has its component past `index`.
struct HbPhase {
  std::uint32_t component = 0;
  HbClock index = 0;  // the object's phases completed before this one
};

// A warp's part: its clock, its two components and the arrivals it issued that have not landed.
struct HbWarp {
  VectorClock clock;
  // The commit component is given at the warp's first tcgen05.commit (most warps never commit,
  // and every clock of the cluster is as long as its components).
  std::uint32_t release_component = 0, commit_component = kNoHbObject;
  HbClock releases = 0;  // arrivals issued (its clock's own release component)
  HbClock commits = 0;   // tcgen05.commit arrivals issued
  // What an arrival lands on: arrivals of one kind to one barrier land in issue order, those of
  // different kinds need not (a commit waits for its MMAs; bar.arrive lands before an mbarrier
  // arrive issued earlier), so a landing is matched by kind too.
  enum class Arrival : std::uint8_t { Mbarrier, Commit, Named };
  static constexpr std::uint32_t kPresent = ~0u;  // no snapshot: the warp's clock is the one
  struct InFlight {
    const void* target;  // the CTA whose barrier it lands on
    std::uint32_t offset;  // mbarrier SMEM offset, or named barrier id
    Arrival kind;
    HbClock releases;  // the warp's release count with this arrival
    HbClock commits;   // Commit: the warp's commit count with it
    std::uint32_t snapshot = kPresent;  // slot in HappensBefore's pool, once the warp acquired
  };
  std::vector<InFlight> in_flight;
  // Whether this warp's clock orders it after `c`'s release number `n` / commit number `n`.
  bool knows_release(const HbWarp& of, HbClock n) const { return clock[of.release_component] >= n; }
  bool knows_commit(const HbWarp& of, HbClock n) const {
    return of.commit_component == kNoHbObject ? n == 0 : clock[of.commit_component] >= n;
  }
  bool knows(const HbPhase& p) const { return clock[p.component] > p.index; }
};

class HappensBefore {
 public:
  void add_warp(HbWarp& w);
  // A new synchronisation object; returns its slot.
  std::uint32_t add_object();
  std::uint32_t component_of(std::uint32_t object) const { return objects_[object].component; }

  // `w` arrives on `object` now (bar.sync, barrier.cluster.arrive): its release, joined at once.
  void release_now(HbWarp& w, std::uint32_t object);
  // `w` issues an arrival of `kind` that lands on (`target`, `offset`) later.
  void release_later(HbWarp& w, const void* target, std::uint32_t offset, HbWarp::Arrival kind);
  // That arrival lands on `object` (the oldest one of `w` of that kind to (`target`, `offset`)).
  void landed(HbWarp& w, const void* target, std::uint32_t offset, HbWarp::Arrival kind, std::uint32_t object);
  // `object` completed its phase number `completed` - 1.
  void completed(std::uint32_t object, HbClock completed);
  // `w` passed a wait that observed `object`'s last completed phase.
  void acquire(HbWarp& w, std::uint32_t object);
  // Phases of `object` that `w` knows complete.
  HbClock known(const HbWarp& w, std::uint32_t object) const { return w.clock[objects_[object].component]; }

 private:
  struct Object {
    std::uint32_t component = 0;
    VectorClock pending;  // every arrival so far (cumulative)
    VectorClock done;     // `pending` as of the last completed phase
  };
  struct Snapshot {
    VectorClock clock;
    std::uint32_t users = 0;  // arrivals in flight that carry it
  };
  std::uint32_t components_ = 0;
  std::vector<Object> objects_;
  SlotPool<Snapshot> snapshots_;
};

}  // namespace bwsim
