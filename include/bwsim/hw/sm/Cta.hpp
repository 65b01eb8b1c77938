#pragma once
// One resident CTA: its SMEM, its mbarriers (by SMEM offset), named barriers, warps, and the
// rules that turn barrier outcomes into wake-ups or located errors.
#include <array>
#include <coroutine>
#include <cstdint>
#include <string>
#include <vector>

#include "bwsim/core/Error.hpp"
#include "bwsim/check/RaceChecker.hpp"
#include "bwsim/hw/sm/MBarrier.hpp"
#include "bwsim/hw/sm/SimContext.hpp"
#include "bwsim/hw/sm/Smem.hpp"
#include "bwsim/hw/sm/WarpState.hpp"
#include "bwsim/hw/tensor/sm90/WgmmaPipe.hpp"

namespace bwsim {

class Sm;
class Cluster;

// mbarrier operations that land on the barrier some cycles after a warp issues them.
enum class BarrierOp : std::uint8_t {
  Arrive,
  ArriveToken,
  ArriveExpectTx,
  ExpectTx,
  CompleteTx,
  Inval,
  NamedArrive,
  CommitArrive,  // tcgen05.commit's arrival: an arrive that also orders the warp's earlier tcgen05 ops
};

inline constexpr std::uint32_t kNamedBarriers = 16;  // bar.sync ids 0..15 (PTX)

class Cta {
 public:
  // `sm_slot`: which of the CTAs resident on the SM together this is (its warps' trace tracks).
  Cta(SimContext& ctx, Sm& sm, Cluster& cluster, std::uint32_t id, std::uint32_t smem_bytes,
      std::uint32_t block_threads, std::uint32_t registers_per_thread, std::uint32_t sm_slot = 0);
  Cta(const Cta&) = delete;
  Cta& operator=(const Cta&) = delete;

  SimContext& ctx() const { return ctx_; }
  Tracer* tracer() const;  // this CTA's SM's tracer, or nullptr
  Sm& sm() const { return sm_; }
  std::uint32_t id() const { return id_; }
  Cluster& cluster() const { return cluster_; }
  std::uint32_t rank() const { return rank_; }  // %cluster_ctarank
  Smem& smem() { return smem_; }
  std::uint32_t block_threads() const { return block_threads_; }
  std::uint32_t num_warps() const { return static_cast<std::uint32_t>(warps_.size()); }
  WarpState& warp(std::uint32_t i) { return warps_[i]; }
  const WarpState& warp(std::uint32_t i) const { return warps_[i]; }

  // --- mbarriers -------------------------------------------------------------------------
  void barrier_init(WarpState& ws, std::uint32_t offset, std::uint32_t count, std::string name);
  // Lands `op` on this CTA's barrier at cycle `at` (>= now) through an event. `ws` is the issuing
  // warp, of this CTA or (a remote arrive, a multicast commit) of a peer in the cluster.
  void barrier_op_at(WarpState& ws, Cycle at, BarrierOp op, std::uint32_t offset, std::uint32_t value);
  // Applies `op` now. `ws` is the acting warp, or the issuing warp of a TMA for complete_tx.
  void barrier_apply(WarpState& ws, BarrierOp op, std::uint32_t offset, std::uint32_t value, const char* opname);
  // The barrier at `offset`, or nullptr if none was ever initialised there.
  const MBarrier* find_barrier(std::uint32_t offset) const;
  // The live barrier at `offset`; a located error if it is misaligned, uninitialised or invalid,
  // or (when `ws` is a peer's warp) if its init has not been made visible to the cluster.
  MBarrier& live_barrier(WarpState& ws, std::uint32_t offset, const char* op) {
    // A barrier in the index passed its init's alignment and bounds checks.
    MBarrier* b = barrier_slot(offset);
    if (b && b->status() == MBarrier::Status::Live && (ws.cta == this || b->visible_to_cluster)) [[likely]]
      return *b;
    return live_barrier_checked(ws, offset, op);
  }
  // fence.mbarrier_init by `ws`: its inits so far are released to the cluster.
  void fence_barrier_inits(const WarpState& ws);
  // A barrier.cluster phase completed: inits released before it become visible to peers.
  void publish_barrier_inits();

  // --- blocking ---------------------------------------------------------------------------
  // Awaitable protocol: set ws.wait* first, then ready_now() from await_ready and park() from
  // await_suspend.
  bool ready_now(WarpState& ws);
  void park(WarpState& ws, std::coroutine_handle<> handle);
  // Resumes a parked warp at cycle `at`.
  void wake(WarpState& ws, Cycle at);
  // A bulk async-group of `ws` made progress: wake it if its wait_group is now satisfied.
  void bulk_progress(WarpState& ws);

  // --- tensor memory (Cta_tmem.cpp) ----------------------------------------------------------
  // tcgen05.alloc for ws.wait_value columns: allocates if they fit, writes the address to SMEM at
  // ws.wait_slot and into ws.token_result; false if the warp must wait.
  bool tmem_try_alloc(WarpState& ws);
  // tcgen05.dealloc landing at cycle `at`; blocked allocations are retried then.
  void tmem_dealloc_at(WarpState& ws, Cycle at, std::uint32_t column, std::uint32_t ncols);
  void tmem_relinquish(WarpState& ws);
  // A located error unless lanes [lane, lane + lanes) x columns [column, column + ncols) are
  // allocated to this CTA and (if `quadrant` is set) lie in the warp's 32-lane quadrant.
  void tmem_check_access(WarpState& ws, const char* op, std::uint32_t lane, std::uint32_t lanes, std::uint32_t column,
                         std::uint32_t ncols, bool quadrant);
  void tmem_check_alloc_size(WarpState& ws, const char* op, std::uint32_t ncols);
  void trace_tmem_in_use() const;  // the SM's "TMEM columns in use" counter, now

  // A located cluster-peer-exited error if this CTA has exited (a peer's access by `ws` is undefined).
  void check_resident_for(WarpState& ws, const char* op) const;

  // --- register pool (setmaxnreg) --------------------------------------------------------------
  // Validates setmaxnreg by `ws` to `n` registers per thread and that its warpgroup agrees.
  void setmaxnreg_check(WarpState& ws, const char* op, std::uint32_t n, bool inc);
  // .dec: returns the warp's registers above `n` to the pool (and retries blocked .inc).
  void registers_release(WarpState& ws, std::uint32_t n);
  std::uint32_t registers_free() const { return registers_free_; }

  // --- wgmma: what each warpgroup's warps issue together (kernel/Warp_wgmma.cpp) ------------------
  WarpgroupWgmmas& warpgroup_wgmmas(std::uint32_t warpgroup) { return wgmma_groups_[warpgroup]; }

  // --- race checking (check/RaceChecker) ----------------------------------------------------
  bool checks_races() const { return ctx_.check_races; }
  template <class F>
  void race_check(F f) { ctx_.race_check(f); }
  template <class F>
  void race_check_absorbing(const F& f) { ctx_.race_check_absorbing(f); }
  // Race checking: this CTA's records of one kind of access (check/RaceChecker).
  std::vector<AsyncAccess>& race_records(AccessKind k) { return race_records_.of(k); }
  RaceRecords& race_record_table() { return race_records_; }

  // --- checks -----------------------------------------------------------------------------
  void check_smem(WarpState& ws, const char* op, std::uint64_t offset, std::uint64_t len, std::uint32_t align) {
    if (!smem_.in_bounds(offset, len) || (align > 1 && offset % align != 0)) [[unlikely]]
      smem_access_failed(ws, op, offset, len, align);
  }
  // A located barrier-clobbered error if [offset, offset + len) overlaps a live mbarrier (a write
  // over it, or a bulk copy of it).
  void check_no_live_barrier(WarpState& ws, const char* op, std::uint32_t offset, std::uint32_t len) {
    if (!live_offsets_.empty() && offset < live_offsets_.back() + 8 && offset + len > live_offsets_.front())
      find_clobbered_barrier(ws, op, offset, len);
  }
  [[noreturn]] void fail(Rule rule, WarpState& ws, const char* op, std::string what, std::string hint) const;
  SimLocation where(const WarpState& ws, const char* op) const;
  std::string describe(const MBarrier& b) const;
  std::string barrier_label(std::uint32_t offset) const;

  // --- lifetime ---------------------------------------------------------------------------
  // Starts every warp's coroutine at cycle `at`; `handles[i]` is warp i's program.
  void start(Cycle at);
  void warp_finished(WarpState& ws);
  void async_begin() { ++async_outstanding_; }
  void async_end();
  bool finished() const { return finished_; }
  // A located error if the finished CTA still holds TMEM columns (called when it retires, from an
  // event: the last warp finishes inside a coroutine's final suspend, which must not throw).
  void check_tmem_released();
  // A MisuseError if a warp exited while its TMA stores still read SMEM.
  void check_exit_stores();
  Cycle finish_cycle() const { return finish_cycle_; }
  // Every unfinished warp's wait and the state of the barriers involved.
  std::string wait_report() const;
  // The latest cycle a warp blocked on an mbarrier began its wait: a warp may be listed before its
  // clock reaches the wait (register_ahead), so a deadlock is reported once every such clock has.
  Cycle latest_mbarrier_wait() const;

 private:
  struct NamedBarrier {
    std::uint32_t expected = 0;
    std::uint32_t arrived = 0;
    WarpState* waiters = nullptr;
    std::uint32_t rounds = 0;     // completed so far
    std::uint32_t hb_object = kNoHbObject;  // its happens-before object (race checking), made at first use
  };
  bool satisfied(WarpState& ws);
  // A wait of `ws` passed, observing `b`'s last completed phase (race checking: happens-before).
  void note_observed(WarpState& ws, const MBarrier& b) const;
  // A stale-parity wait is a located error (inline checks) or a check posted to the race-checking
  // thread; stale_parity answers at once and is for inline checks only.
  void check_stale_parity(WarpState& ws, const MBarrier& b);
  bool stale_parity(const WarpState& ws, const MBarrier& b) const;
  // An mbarrier wait parked before the warp's clock reached it joins the barrier's waiters now,
  // as of its own cycle, rather than by a clock catch-up event (one event fewer); a wait that
  // passes there has its resume scheduled now as well (passed_ahead: one event instead of two);
  // false where the wait fails at once (then the catch-up decides it at the warp's cycle).
  bool register_ahead(WarpState& ws);
  // Before `b` changes (a phase completes, it is invalidated or re-initialised): each wait listed
  // ahead as passing takes effect as it would have at its warp's cycle: observed, if that cycle
  // came before this change; otherwise taken back to its catch-up, which decides it anew.
  void settle_passed_ahead(MBarrier& b);
  // Lists `ws` among `b`'s waiters, latest registration first (the order they are woken in).
  static void add_waiter(MBarrier& b, WarpState& ws);
  // Takes `ws`, which is listed, off `b`'s waiters.
  static void remove_waiter(MBarrier& b, WarpState& ws);
  // Whether `ws` was listed ahead of its clock and has not reached the wait by the running event.
  bool waits_later(const WarpState& ws) const;
  // Whether any warp waits on `b` by now (not counting waits listed ahead of their warp's clock).
  bool waited_on(const MBarrier& b) const;
  bool tmem_try_pair_alloc(WarpState& ws);
  bool try_take_registers(WarpState& ws);
  void tmem_alloc_done(WarpState& ws, std::uint32_t column);
  void enlist(WarpState& ws);
  void named_arrive(WarpState& ws, std::uint32_t id, std::uint32_t threads, bool wait);
  void phase_completed(MBarrier& b);
  void check_finished();
  static void on_sync(void* ws, std::uint64_t);
  static void on_resume(void* ws, std::uint64_t);
  [[gnu::cold]] void trace_wait(const WarpState& ws, Cycle now) const;  // the span of the wait `ws` ends now
  static void on_barrier_op(void* ws, std::uint64_t packed);
  static void on_tmem_dealloc(void* ws, std::uint64_t packed);
  MBarrier* barrier_slot(std::uint32_t offset) {
    const std::uint32_t word = offset / 8;
    if (offset % 8 != 0 || word < index_base_ || word - index_base_ >= barrier_index_.size()) return nullptr;
    const std::uint32_t i = barrier_index_[word - index_base_];
    return i == 0 ? nullptr : &barriers_[i - 1];
  }
  // live_barrier's checks in full, in order: the located error of a barrier that is not live here.
  [[gnu::cold]] MBarrier& live_barrier_checked(WarpState& ws, std::uint32_t offset, const char* op);
  // mbarrier.inval of `b` by `ws`.
  void invalidate_barrier(WarpState& ws, MBarrier& b, const char* opname);
  // The located errors of the inline checks, out of line: barrier_apply's for an operation whose
  // outcome `out` is a misuse; check_smem's; tmem_check_access's (the allocation's, which it
  // checks first, else the lane quadrant's).
  [[noreturn, gnu::cold]] void barrier_op_failed(WarpState& ws, BarrierOp op, std::uint32_t value, const MBarrier& b,
                                                 MBarrier::Outcome out, const char* opname) const;
  [[noreturn, gnu::cold]] void smem_access_failed(WarpState& ws, const char* op, std::uint64_t offset,
                                                  std::uint64_t len, std::uint32_t align) const;
  [[noreturn, gnu::cold]] void tmem_access_failed(WarpState& ws, const char* op, std::uint32_t lane,
                                                  std::uint32_t lanes, std::uint32_t column, std::uint32_t ncols) const;
  // check_no_live_barrier's search where [offset, offset + len) reaches between the live
  // barriers' lowest and highest offsets: a located error if it overlaps one.
  void find_clobbered_barrier(WarpState& ws, const char* op, std::uint32_t offset, std::uint32_t len);
  // Records barriers_ entry `entry` (1-based) for SMEM word `word`, widening the index's span.
  void index_barrier(std::uint32_t word, std::uint32_t entry);

  SimContext& ctx_;
  Sm& sm_;
  Cluster& cluster_;
  std::uint32_t id_;
  std::uint32_t rank_;
  std::uint32_t block_threads_;
  Smem smem_;
  std::vector<WarpState> warps_;
  std::vector<MBarrier> barriers_;
  // Per 8-byte SMEM word from word index_base_ on, over the span that holds mbarriers: 1 + index
  // into barriers_, or 0. (Kernels keep their barriers together, so this is a few hundred bytes
  // where one entry per word of SMEM took 114 KB to clear and fault in for every CTA.)
  std::vector<std::uint32_t> barrier_index_;
  std::uint32_t index_base_ = 0;
  std::vector<std::uint32_t> live_offsets_;  // sorted, for clobber checks
  alignas(64) RaceRecords race_records_;  // the race checks' (they may run on another thread: own cache lines)
  // A line of its own: the checking thread writes the race records' last line.
  alignas(64) std::uint32_t registers_free_ = 0;
  std::vector<WarpState*> register_waiters_;  // blocked setmaxnreg.inc, oldest first
  struct SetmaxnregRound {
    std::uint32_t n;
    bool inc;
  };
  std::vector<std::vector<SetmaxnregRound>> warpgroup_rounds_;  // per warpgroup, per instruction
  std::vector<WarpgroupWgmmas> wgmma_groups_;                    // per warpgroup
  std::array<NamedBarrier, kNamedBarriers> named_{};
  std::uint32_t warps_running_ = 0;
  std::uint32_t async_outstanding_ = 0;
  bool finished_ = false;
  bool tmem_relinquished_ = false;
  WarpState* last_warp_ = nullptr;  // the last warp to finish (where an exit-time error is reported)
  WarpState* exit_with_store_ = nullptr;  // the first warp that exited with a TMA store reading SMEM
  Cycle exit_with_store_at_ = 0;
  Cycle finish_cycle_ = 0;
};

}  // namespace bwsim
