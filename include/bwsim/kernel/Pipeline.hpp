#pragma once
// CUTLASS-style pipelines over full/empty mbarrier pairs in SMEM (sm90_pipeline.hpp protocol).
// Arrival counts are per warp: a bwsim warp program is one coroutine per warp, so a consumer
// warp releases a stage with one arrival (CUTLASS counts threads or warpgroups instead).
#include <cstdint>
#include <string>

#include "bwsim/core/Task.hpp"
#include "bwsim/kernel/Warp.hpp"

namespace bwsim {

// Stage index, phase bit and iteration count; ++ wraps the index and flips the phase.
struct PipelineState {
  std::uint32_t stages = 1;
  std::uint32_t index = 0;
  std::uint32_t phase = 0;
  std::uint32_t count = 0;

  PipelineState& operator++() {
    ++count;
    if (++index == stages) {
      index = 0;
      phase ^= 1u;
    }
    return *this;
  }
};

inline PipelineState make_consumer_start_state(std::uint32_t stages) { return PipelineState{stages, 0, 0, 0}; }
// The producer starts at phase 1 so its first acquire of every (empty) stage passes at once.
inline PipelineState make_producer_start_state(std::uint32_t stages) { return PipelineState{stages, 0, 1, 0}; }

// full[i] at base + 8i, empty[i] at base + 8(stages + i).
class PipelineBarriers {
 public:
  PipelineBarriers(SmemAddr base, std::uint32_t stages, std::string name)
      : base_(base), stages_(stages), name_(std::move(name)) {}
  static std::uint32_t smem_bytes(std::uint32_t stages) { return 16 * stages; }
  std::uint32_t stages() const { return stages_; }
  MBarrierRef full(std::uint32_t i) const { return MBarrierRef{base_.offset + 8 * i}; }
  MBarrierRef empty(std::uint32_t i) const { return MBarrierRef{base_.offset + 8 * (stages_ + i)}; }
  // One warp initialises every barrier; the CTA must synchronise before others use them.
  void init(Warp& w, std::uint32_t full_arrivals, std::uint32_t empty_arrivals) const;
  // Waits until consumers released every stage, so no load is in flight at exit.
  Task producer_tail(Warp& w, PipelineState state) const;

  // The protocol every pipeline shares: the producer waits for an empty stage, the consumer for
  // a full one and releases it with one arrival per warp (PipelineTmaAsync arms full[i] in its
  // acquire and PipelineTmaUmmaAsync releases with tcgen05.commit instead).
  Warp::WaitAwaiter producer_acquire(Warp& w, const PipelineState& s) const {
    return w.mbarrier_wait(empty(s.index), s.phase);
  }
  Warp::WaitAwaiter consumer_wait(Warp& w, const PipelineState& s) const {
    return w.mbarrier_wait(full(s.index), s.phase);
  }
  void consumer_release(Warp& w, const PipelineState& s) const { w.mbarrier_arrive(empty(s.index)); }

 protected:
  SmemAddr base_;
  std::uint32_t stages_;
  std::string name_;
};

// TMA producer -> consumer warps. full[i]: 1 arrival (the producer's arrive.expect_tx) plus the
// stage's transaction bytes; empty[i]: one arrival per consumer warp.
class PipelineTmaAsync : public PipelineBarriers {
 public:
  struct Params {
    std::uint32_t stages = 2;
    std::uint32_t transaction_bytes = 0;  // bytes the TMA loads of one stage deliver
    std::uint32_t consumer_warps = 1;
    std::string name = "pipe";
    // Whether this CTA's producer arms full[i] (false for the peer of a CTA pair, whose loads
    // complete on the leader's barrier, which the leader arms with the pair's bytes).
    bool arms_full = true;
  };
  PipelineTmaAsync(SmemAddr barriers, Params p)
      : PipelineBarriers(barriers, p.stages, p.name),
        bytes_(p.transaction_bytes),
        consumers_(p.consumer_warps),
        arms_full_(p.arms_full) {}

  void init(Warp& w) const { PipelineBarriers::init(w, 1, consumers_); }

  struct AcquireAwaiter {
    Warp::WaitAwaiter wait;
    Warp& w;
    MBarrierRef full;
    std::uint32_t bytes;
    bool arm;
    bool await_ready() { return wait.await_ready(); }
    void await_suspend(std::coroutine_handle<> h) { wait.await_suspend(h); }
    void await_resume() {
      if (arm) w.mbarrier_arrive_expect_tx(full, bytes);
    }
  };
  // Waits for the stage to be empty, then arms full[i] with the stage's transaction bytes.
  AcquireAwaiter producer_acquire(Warp& w, const PipelineState& s) const { return producer_acquire(w, s, bytes_); }
  // As above with this stage's own byte count (stages of different contents, e.g. K and V tiles
  // of different head dims in one pipeline).
  AcquireAwaiter producer_acquire(Warp& w, const PipelineState& s, std::uint32_t bytes) const {
    return AcquireAwaiter{w.mbarrier_wait(empty(s.index), s.phase), w, full(s.index), bytes, arms_full_};
  }
  // The barrier the stage's TMA loads complete.
  MBarrierRef producer_get_barrier(const PipelineState& s) const { return full(s.index); }

 private:
  std::uint32_t bytes_;
  std::uint32_t consumers_;
  bool arms_full_;
};

// TMA producer -> the MMA warp (sm100_pipeline.hpp): as PipelineTmaAsync, but the consumer is
// one MMA-issuing warp that releases a stage with tcgen05.commit, so empty[i] fires only once the
// MMAs reading the stage have completed. In a cluster, empty[i] counts one commit per MMA that
// reads what this CTA's producer multicast, and each MMA warp's commit is multicast to every CTA
// whose producer filled its stage (`release_mask`).
class PipelineTmaUmmaAsync : public PipelineTmaAsync {
 public:
  struct Params {
    std::uint32_t stages = 2;
    std::uint32_t transaction_bytes = 0;
    std::string name = "mainloop";
    std::uint32_t consumers = 1;
    std::uint16_t release_mask = 0;  // 0: this CTA only
    bool arms_full = true;
  };
  PipelineTmaUmmaAsync(SmemAddr barriers, Params p)
      : PipelineTmaAsync(barriers, {.stages = p.stages,
                                    .transaction_bytes = p.transaction_bytes,
                                    .consumer_warps = p.consumers,
                                    .name = std::move(p.name),
                                    .arms_full = p.arms_full}),
        release_mask_(p.release_mask) {}
  void consumer_release(Warp& w, const PipelineState& s) const { w.tcgen05_commit(empty(s.index), release_mask_); }

 private:
  std::uint16_t release_mask_;
};

// The MMA warp -> consumer warps through TMEM (accumulators): full[i] is signalled by
// tcgen05.commit once the stage's MMAs completed; empty[i] gets one arrival per consumer warp.
// For a CTA pair the leader's commit reaches both CTAs (`commit_mask`) and every consumer warp of
// the pair releases to the leader's empty[i] (`release_rank`).
class PipelineUmmaAsync : public PipelineBarriers {
 public:
  struct Params {
    std::uint32_t stages = 2;
    std::uint32_t consumer_warps = 4;
    std::string name = "accum";
    std::uint16_t commit_mask = 0;     // 0: this CTA only
    std::int32_t release_rank = -1;    // -1: this CTA
  };
  PipelineUmmaAsync(SmemAddr barriers, Params p)
      : PipelineBarriers(barriers, p.stages, p.name),
        consumers_(p.consumer_warps),
        commit_mask_(p.commit_mask),
        release_rank_(p.release_rank) {}

  void init(Warp& w) const { PipelineBarriers::init(w, 1, consumers_); }
  void producer_commit(Warp& w, const PipelineState& s) const { w.tcgen05_commit(full(s.index), commit_mask_); }
  void consumer_release(Warp& w, const PipelineState& s) const {
    if (release_rank_ < 0 || static_cast<std::uint32_t>(release_rank_) == w.cluster_ctarank())
      w.mbarrier_arrive(empty(s.index));
    else
      w.mbarrier_arrive(w.mapa(empty(s.index), static_cast<std::uint32_t>(release_rank_)));
  }

 private:
  std::uint32_t consumers_;
  std::uint16_t commit_mask_;
  std::int32_t release_rank_;
};

// Plain arrive/wait both ways (e.g. warp -> warp hand-off through SMEM).
class PipelineAsync : public PipelineBarriers {
 public:
  struct Params {
    std::uint32_t stages = 2;
    std::uint32_t producer_warps = 1;
    std::uint32_t consumer_warps = 1;
    std::string name = "pipe";
  };
  PipelineAsync(SmemAddr barriers, Params p)
      : PipelineBarriers(barriers, p.stages, p.name), producers_(p.producer_warps), consumers_(p.consumer_warps) {}

  void init(Warp& w) const { PipelineBarriers::init(w, producers_, consumers_); }
  void producer_commit(Warp& w, const PipelineState& s) const { w.mbarrier_arrive(full(s.index)); }

 private:
  std::uint32_t producers_;
  std::uint32_t consumers_;
};

}  // namespace bwsim
