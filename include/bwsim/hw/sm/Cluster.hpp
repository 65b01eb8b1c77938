#pragma once
// One thread-block cluster: its CTAs by rank (placed together, a CTA pair on one TPC), the
// cluster barrier (barrier.cluster.arrive/wait) and the rendezvous of cta_group::2 TMEM
// allocation. A launch without clusters runs every CTA as a cluster of one, as CUDA does.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bwsim/check/HappensBefore.hpp"
#include "bwsim/core/SlotPool.hpp"
#include "bwsim/hw/sm/SimContext.hpp"

namespace bwsim {

class Cta;
struct WarpState;

inline constexpr std::uint32_t kMaxClusterCtas = 16;  // the ISA's %cluster_ctarank range

struct ClusterShape {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint32_t size() const { return x * y * z; }
};

class Cluster {
 public:
  Cluster(SimContext& ctx, std::uint32_t id, ClusterShape shape);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  std::uint32_t id() const { return id_; }
  const ClusterShape& shape() const { return shape_; }
  std::uint32_t size() const { return shape_.size(); }
  void add(Cta& cta) { ctas_.push_back(&cta); }
  Cta& cta(std::uint32_t rank) const { return *ctas_[rank]; }
  bool finished() const;

  // --- barrier.cluster ----------------------------------------------------------------------
  // Counts `ws`'s arrival, whose effect is ready (its release fence done) at `ready_at`. The phase
  // completes when every warp of the cluster that has not exited has arrived; its waiters resume
  // cluster.barrier_latency after the last arrival is ready.
  void barrier_arrive(WarpState& ws, Cycle ready_at);
  // An exited warp no longer takes part (it may complete the current phase).
  void warp_exited(WarpState& ws);
  std::uint64_t barrier_phase() const { return phase_; }
  // The cycle the waiters of the last completed phase resume.
  Cycle barrier_wake_at() const { return wake_at_; }
  void add_barrier_waiter(WarpState& ws);
  std::uint32_t barrier_arrived() const { return arrived_; }
  std::uint32_t barrier_expected() const { return live_warps_; }

  // --- race checking: the cluster's happens-before relation (check/HappensBefore) -------------
  // Its state belongs to the race checks (SimContext::race_check): they may run on another thread.
  HappensBefore& hb() { return hb_; }
  // A new synchronisation object of that relation: its number now (the simulation keeps it in the
  // barrier), its clocks created in order with the checks.
  std::uint32_t new_hb_object();
  // `ws` passed barrier.cluster.wait: it is ordered after every release arrival of the phase.
  void barrier_observed(WarpState& ws);

  // --- distributed shared memory -------------------------------------------------------------
  // st.shared::cluster by `ws` into the CTA of `rank`: the bytes land at cycle `at`.
  void dsmem_store_at(WarpState& ws, Cycle at, std::uint32_t rank, std::uint32_t offset, std::span<const std::byte> data);
  // cp.async.bulk.shared::cluster by `ws`: `data` (read from its SMEM at issue) lands at `offset`
  // in the CTA of `rank` at cycle `at` and signals complete_tx of its bytes on that CTA's
  // barrier at `barrier`.
  void bulk_copy_at(WarpState& ws, Cycle at, std::uint32_t rank, std::uint32_t offset, std::span<const std::byte> data,
                    std::uint32_t barrier);

  // --- cta_group::2 TMEM allocation rendezvous -----------------------------------------------
  // The warp of a pair that calls tcgen05.alloc.cta_group::2 first waits here for its partner.
  WarpState*& pair_alloc_waiter(std::uint32_t pair) { return pair_alloc_[pair]; }

 private:
  void complete_phase_if_done();
  struct DsmemStore {
    WarpState* ws = nullptr;
    std::uint32_t rank = 0, offset = 0;
    std::vector<std::byte> bytes;  // capacity kept when the slot is reused
    std::int64_t barrier = -1;     // a bulk copy's complete_tx barrier; -1: a plain store
  };
  static void on_dsmem_store(void* cluster, std::uint64_t slot);
  std::uint32_t put_store(WarpState& ws, Cycle at, std::uint32_t rank, std::uint32_t offset,
                          std::span<const std::byte> data, std::int64_t barrier);

  SimContext& ctx_;
  std::uint32_t id_;
  ClusterShape shape_;
  std::vector<Cta*> ctas_;
  std::uint32_t live_warps_ = 0;
  std::uint32_t arrived_ = 0;
  std::uint64_t phase_ = 0;
  Cycle ready_at_ = 0;  // latest arrival readiness in the current phase
  Cycle wake_at_ = 0;
  WarpState* waiters_ = nullptr;
  alignas(64) HappensBefore hb_;  // the checker's (its own host cache lines)
  alignas(64) std::uint32_t hb_objects_ = 0;
  std::uint32_t barrier_hb_object_;
  std::vector<WarpState*> pair_alloc_;
  SlotPool<DsmemStore> stores_;

  friend class Cta;  // counts its warps in at start
};

}  // namespace bwsim
