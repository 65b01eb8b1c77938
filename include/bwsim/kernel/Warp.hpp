#pragma once
// The handle a warp program gets: its identity and the operations of the modeled ISA.
// Non-blocking operations (arrive, TMA issue, commit_group) cost their issue cycles and return;
// their effects land at the cycle the model says. Anything that can block is `co_await`ed.
// A bwsim warp program is one coroutine per warp: code under `if (w.elect_one())` runs once.
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "bwsim/hw/Cta.hpp"
#include "bwsim/hw/TensorMap.hpp"

namespace bwsim {

// A CTA-relative shared-memory address.
struct SmemAddr {
  std::uint32_t offset = 0;
  SmemAddr operator+(std::uint32_t bytes) const { return SmemAddr{offset + bytes}; }
};

// An mbarrier: its CTA-relative SMEM address.
struct MBarrierRef {
  std::uint32_t offset = 0;
};

// The state token mbarrier.arrive returns: which phase the arrival belonged to.
struct BarrierToken {
  std::uint32_t barrier = 0;
  std::uint64_t phase = 0;
};

class Warp {
 public:
  Warp(WarpState& state, Cta& cta, std::uint32_t grid_ctas) : ws_(state), cta_(cta), grid_ctas_(grid_ctas) {}

  // --- identity -----------------------------------------------------------------------------
  std::uint32_t warp_idx() const { return ws_.index; }
  std::uint32_t warpgroup_idx() const { return ws_.index / 4; }
  std::uint32_t num_warps() const { return cta_.num_warps(); }
  std::uint32_t block_threads() const { return cta_.block_threads(); }
  std::uint32_t cta_idx() const { return cta_.id(); }
  std::uint32_t grid_ctas() const { return grid_ctas_; }
  std::uint32_t sm_idx() const;
  bool functional() const { return cta_.ctx().functional(); }
  const HardwareConfig& config() const { return cta_.ctx().config; }
  // The warp's issue clock (cycle of its next instruction).
  Cycle now() const { return ws_.ready; }
  // Names the warp's role ("Producer", "MMA", "Epilogue w2"): trace track name and reports.
  void set_role(std::string_view role);
  // elect.sync over the full warp: exactly one lane, so in a warp-level program always true.
  bool elect_one() const { return true; }

  // --- mbarrier -----------------------------------------------------------------------------
  void mbarrier_init(MBarrierRef bar, std::uint32_t count, std::string_view name = {});
  void mbarrier_arrive(MBarrierRef bar, std::uint32_t count = 1);
  void mbarrier_arrive_expect_tx(MBarrierRef bar, std::uint32_t bytes);
  void mbarrier_expect_tx(MBarrierRef bar, std::uint32_t bytes);
  void mbarrier_complete_tx(MBarrierRef bar, std::uint32_t bytes);
  void mbarrier_inval(MBarrierRef bar);

  struct WaitAwaiter;
  struct ProbeAwaiter;
  struct ArriveAwaiter;
  // Blocks until the phase with parity `parity` has completed (try_wait.parity in a loop).
  WaitAwaiter mbarrier_wait(MBarrierRef bar, std::uint32_t parity);
  // Blocks until the phase named by `token` has completed (try_wait with a state token in a loop).
  WaitAwaiter mbarrier_wait(BarrierToken token);
  // One non-blocking test: has the phase with parity `parity` / named by `token` completed?
  ProbeAwaiter mbarrier_test_wait_parity(MBarrierRef bar, std::uint32_t parity);
  ProbeAwaiter mbarrier_test_wait(BarrierToken token);
  // mbarrier.arrive whose returned state is used: resumes once the arrival has landed.
  ArriveAwaiter mbarrier_arrive_token(MBarrierRef bar, std::uint32_t count = 1);

  // --- TMA (cp.async.bulk.tensor) -----------------------------------------------------------
  // The tensor map must outlive the launch (it is the kernel's parameter).
  void tma_load(const TensorMap& map, SmemAddr dst, MBarrierRef bar, const TensorCoords& coords);
  void tma_store(const TensorMap& map, SmemAddr src, const TensorCoords& coords);
  void tma_prefetch(const TensorMap& map, const TensorCoords& coords);
  void bulk_commit_group();
  WaitAwaiter bulk_wait_group(std::uint32_t pending_allowed);
  WaitAwaiter bulk_wait_group_read(std::uint32_t pending_allowed);
  // fence.proxy.async.shared::cta: orders this warp's generic SMEM writes before async-proxy reads.
  void fence_proxy_async();

  // --- CTA synchronisation ------------------------------------------------------------------
  WaitAwaiter bar_sync(std::uint32_t id, std::uint32_t threads);
  void bar_arrive(std::uint32_t id, std::uint32_t threads);
  WaitAwaiter syncthreads();

  // --- generic shared memory (warp-collective; costs bytes / smem.bytes_per_cycle) -----------
  void st_shared(SmemAddr dst, std::span<const std::byte> data);
  void ld_shared(SmemAddr src, std::span<std::byte> out);

  // --- time ---------------------------------------------------------------------------------
  // Suspends for `cycles` (a dependent computation, a nanosleep).
  WaitAwaiter sleep(Cycle cycles);
  // Charges `cycles` of issue time without suspending (an instruction sequence that needs no
  // other agent's progress).
  void advance(Cycle cycles) { ws_.ready += cycles; }

  // --- awaitables ---------------------------------------------------------------------------
  struct WaitAwaiter {
    WarpState& ws;
    WaitKind kind;
    std::uint32_t slot;
    std::uint64_t value;
    bool await_ready() {
      ws.wait = kind;
      ws.wait_slot = slot;
      ws.wait_value = kind == WaitKind::Delay ? ws.ready + value : value;
      return ws.cta->ready_now(ws);
    }
    void await_suspend(std::coroutine_handle<> h) { ws.cta->park(ws, h); }
    void await_resume() const noexcept {}
  };
  struct ProbeAwaiter {
    Warp& w;
    std::uint32_t barrier;
    bool by_parity;
    std::uint64_t value;
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h) { w.cta_.park(w.ws_, h); }
    bool await_resume();
  };
  struct ArriveAwaiter {
    Warp& w;
    std::uint32_t barrier;
    bool await_ready() { return false; }
    void await_suspend(std::coroutine_handle<> h) { w.cta_.park(w.ws_, h); }
    BarrierToken await_resume() const { return BarrierToken{barrier, w.ws_.token_result}; }
  };

  WarpState& state() { return ws_; }
  Cta& cta() { return cta_; }

 private:
  Cycle issue(Cycle cost);
  void barrier_op(BarrierOp op, MBarrierRef bar, std::uint32_t value);
  void trace_op(std::string_view name, Cycle at, Cycle cost) const;

  WarpState& ws_;
  Cta& cta_;
  std::uint32_t grid_ctas_;
};

}  // namespace bwsim
