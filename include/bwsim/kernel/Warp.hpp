#pragma once
// The handle a warp program gets: its identity and the operations of the modeled ISA.
// Non-blocking operations (arrive, TMA issue, commit_group) cost their issue cycles and return;
// their effects land at the cycle the model says. Anything that can block is `co_await`ed.
// A bwsim warp program is one coroutine per warp: code under `if (w.elect_one())` runs once.
#include <array>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/memory/TensorMap.hpp"
#include "bwsim/hw/tensor/sm100/MmaPipe.hpp"
#include "bwsim/hw/sm/Sm.hpp"
#include "bwsim/hw/tensor/sm100/Tmem.hpp"
#include "bwsim/hw/tensor/sm100/TmemAccess.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"
#include "bwsim/hw/tensor/sm90/Wgmma.hpp"
#include "bwsim/kernel/CoreBlock.hpp"
#include "bwsim/kernel/WgmmaAccumulator.hpp"

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

// A shared::cluster address (what mapa returns): `offset` in the SMEM of the cluster's CTA `rank`.
struct ClusterSmemAddr {
  std::uint32_t rank = 0;
  std::uint32_t offset = 0;
};
struct ClusterBarrierRef {
  std::uint32_t rank = 0;
  std::uint32_t offset = 0;
};

// cp.async.bulk.tensor qualifiers: .multicast::cluster with a CTA mask (0: no multicast, the
// box lands in the issuing CTA only) and .cta_group::2 (complete_tx goes to the barrier at the
// same offset in the destination's pair leader, rank & ~1: the peer bit cleared, as CUTLASS does).
struct TmaLoadFlags {
  std::uint16_t multicast_mask = 0;
  bool cta_group_2 = false;
};

// The state token mbarrier.arrive returns: which phase the arrival belonged to.
struct BarrierToken {
  std::uint32_t barrier = 0;
  std::uint64_t phase = 0;
};

inline constexpr std::uint32_t kTmemLoadPoison = 0xFFFFFFFFu;  // an fp32 NaN

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
  // Cluster identity (Warp_cluster.cpp): %cluster_ctarank, %cluster_nctarank, the cluster's
  // index in the grid, its shape and the CTA's (x, y, z) in it (x fastest).
  std::uint32_t cluster_ctarank() const { return cta_.rank(); }
  std::uint32_t cluster_nctarank() const;
  std::uint32_t cluster_idx() const;
  std::uint32_t num_clusters() const { return grid_ctas_ / cluster_nctarank(); }
  ClusterShape cluster_shape() const;
  std::array<std::uint32_t, 3> cluster_cta_coord() const;
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

  // --- clusters (Warp_cluster.cpp) ---------------------------------------------------------
  // barrier.cluster.arrive (.release by default; relaxed skips the release fence's cost) and
  // barrier.cluster.wait: every warp of the cluster that has not exited arrives, then waits.
  void cluster_arrive();
  void cluster_arrive_relaxed();
  WaitAwaiter cluster_wait();
  // fence.mbarrier_init.release.cluster: orders this thread's mbarrier.init before the cluster
  // barrier that makes the barriers usable by peers.
  void fence_mbarrier_init();
  // mapa.shared::cluster: the same offset in the CTA of rank `rank`.
  ClusterSmemAddr mapa(SmemAddr addr, std::uint32_t rank);
  ClusterBarrierRef mapa(MBarrierRef bar, std::uint32_t rank);
  // mbarrier.arrive.shared::cluster: lands cluster.remote_arrive_latency later (a remote arrive).
  void mbarrier_arrive(ClusterBarrierRef bar, std::uint32_t count = 1);
  // st.shared::cluster / ld.shared::cluster (warp-collective). A store's bytes land in the peer's
  // SMEM cluster.dsmem_store_latency after issue; a load reads at issue and its value arrives
  // cluster.dsmem_load_latency later (the warp stalls that long).
  void st_shared_cluster(ClusterSmemAddr dst, std::span<const std::byte> data);
  void ld_shared_cluster(ClusterSmemAddr src, std::span<std::byte> out);
  // cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], bytes,
  // [bar]: one thread copies `bytes` (a multiple of 16) of this CTA's SMEM into the CTA of
  // dst.rank (the async proxy: generic writes of the source need fence.proxy.async first); they
  // land cluster.dsmem_store_latency after the SMEM read and signal complete_tx on `bar`, a
  // barrier of the destination CTA.
  void bulk_copy_to_cluster(ClusterSmemAddr dst, SmemAddr src, std::uint32_t bytes, ClusterBarrierRef bar);

  // --- TMA (cp.async.bulk.tensor) -----------------------------------------------------------
  // The tensor map must outlive the launch (it is the kernel's parameter).
  void tma_load(const TensorMap& map, SmemAddr dst, MBarrierRef bar, const TensorCoords& coords,
                TmaLoadFlags flags = {});
  void tma_store(const TensorMap& map, SmemAddr src, const TensorCoords& coords);
  // cp.reduce.async.bulk.tensor.global.shared::cta.add.tile.bulk_group: adds the box to GMEM
  // element-wise (f32 maps only), tracked like a store by the bulk async-groups.
  void tma_reduce_add(const TensorMap& map, SmemAddr src, const TensorCoords& coords);
  void tma_prefetch(const TensorMap& map, const TensorCoords& coords);
  void bulk_commit_group();
  WaitAwaiter bulk_wait_group(std::uint32_t pending_allowed);
  WaitAwaiter bulk_wait_group_read(std::uint32_t pending_allowed);
  // fence.proxy.async.shared::cta: orders this warp's generic SMEM writes before async-proxy reads.
  void fence_proxy_async();

  // --- tcgen05: tensor memory and the MMA pipe (Warp_tcgen05.cpp) ----------------------------
  struct AllocAwaiter;
  // tcgen05.alloc.cta_group::N (warp-collective): blocks until `ncols` columns (a power of 2 in
  // 32..512) are free, writes the TMEM address to SMEM at `dst` and also returns it. With
  // cta_group 2, one warp of each CTA of the pair calls it and both get the same columns.
  AllocAwaiter tcgen05_alloc(SmemAddr dst, std::uint32_t ncols, std::uint32_t cta_group = 1);
  void tcgen05_dealloc(TmemAddr addr, std::uint32_t ncols, std::uint32_t cta_group = 1);
  void tcgen05_relinquish_alloc_permit();
  // tcgen05.mma.cta_group::N.kind::<kind> [d], a_desc, b_desc, idesc, enable_input_d: issued by
  // one thread (call it under elect_one()). enable_input_d false overwrites D, true adds to it.
  // cta_group 2 (from the pair's leader, even rank): M = 128 or 256 over the pair; each CTA gives
  // its M/2 rows of A and N/2 rows of B (the leader rows 0..N/2-1) from the same SMEM offsets and
  // gets its M/2 rows of D in its own TMEM.
  void tcgen05_mma(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, InstrDescriptor idesc,
                   bool enable_input_d, std::uint32_t cta_group = 1);
  // The TS form: A from TMEM.
  void tcgen05_mma(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, InstrDescriptor idesc, bool enable_input_d,
                   std::uint32_t cta_group = 1);
  // tcgen05.mma.cta_group::N.kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale.scale_vec::NX [d], a_desc,
  // b_desc, idesc, [scale_a], [scale_b], enable_input_d: D (+)= (A x scale_A)(B x scale_B), the
  // factors in TMEM as scale_a_cell / scale_b_cell place them (MmaPipe.hpp), the descriptor's
  // scale-factor IDs picking their bytes. kind::mxf8f6f4 takes ue8m0 with 1X; kind::mxf4 ue8m0
  // with 2X; kind::mxf4nvf4 ue8m0 with 2X or 4X, ue4m3 with 4X. M = 128 (cta_group::1) or 256.
  struct BlockScale {
    TmemAddr a, b;
    ScaleVec vec = ScaleVec::X1;
  };
  void tcgen05_mma(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, InstrDescriptor idesc,
                   const BlockScale& scale, bool enable_input_d, std::uint32_t cta_group = 1);
  void tcgen05_mma(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, InstrDescriptor idesc,
                   const BlockScale& scale, bool enable_input_d, std::uint32_t cta_group = 1);
  // tcgen05.mma.sp.cta_group::N.kind::{f16,tf32,f8f6f4,i8} [d], a_desc | [a], b_desc, [meta],
  // idesc, enable_input_d: structured-sparse A (the descriptor's sparse bit set). The logical K is
  // twice the kind's; A holds, per row, the stored half (the dense instruction's K elements) and
  // the metadata in TMEM at `meta` places them (SparseMetadata.hpp; f16 / tf32 read the column
  // meta + the descriptor's sparsity selector). M = 128 (cta_group::1) or 256 (cta_group::2).
  void tcgen05_mma_sp(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, TmemAddr meta,
                      InstrDescriptor idesc, bool enable_input_d, std::uint32_t cta_group = 1);
  void tcgen05_mma_sp(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, TmemAddr meta, InstrDescriptor idesc,
                      bool enable_input_d, std::uint32_t cta_group = 1);
  // tcgen05.mma.ws.cta_group::1.kind::{f16,tf32,f8f6f4,i8}.collector::bN::op [d], a_desc | [a],
  // b_desc, idesc, enable_input_d: weight-stationary, M = 32, 64 or 128 with N = 64, 128 or 256;
  // D lies folded over the 128 lanes (accumulator_cell, MmaPipe.hpp: M = 32 takes N/4 columns,
  // M = 64 N/2). B goes through collector buffer N: fill keeps it, use / lastuse read it from there
  // (no SMEM read; a located error unless a fill of the same B descriptor is still valid), discard
  // frees it. A from TMEM only at M = 128 (the narrower A layouts are PTX figures bwsim has not read).
  void tcgen05_mma_ws(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, InstrDescriptor idesc,
                      bool enable_input_d, Collector collector = {});
  void tcgen05_mma_ws(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, InstrDescriptor idesc,
                      bool enable_input_d, Collector collector = {});
  // tcgen05.shift.cta_group::N.down [at]: issued by one thread; in each 32-lane sub-partition rows
  // 0-30 take the next row's 8 columns from `at`'s column, row 31 keeps its own (MmaPipe.hpp,
  // TmemShiftInstr). In order with this warp's MMAs and copies; tracked by tcgen05.commit.
  void tcgen05_shift(TmemAddr at, std::uint32_t cta_group = 1);
  // tcgen05.cp.cta_group::N.<shape> [dst], src_desc: issued by one thread; copies the rows the
  // SMEM descriptor describes (K-major canonical layout, rows = the strided dimension) into TMEM
  // (lane placement in TmemAccess.hpp), in order with this warp's MMAs; tracked by tcgen05.commit.
  // cta_group 2 (from the pair's leader): each CTA of the pair copies from its own SMEM at the
  // descriptor's address into its own TMEM.
  void tcgen05_cp(TmemAddr dst, SmemDescriptor src, TmemCopyShape shape, std::uint32_t cta_group = 1);
  // tcgen05.commit.mbarrier::arrive::one: one arrival on `bar` once every earlier tcgen05.mma / cp
  // of this warp has completed; with a multicast mask, one arrival on the barrier at `bar`'s
  // offset in every CTA of the mask (.multicast::cluster) instead.
  void tcgen05_commit(MBarrierRef bar, std::uint16_t multicast_mask = 0);
  // tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b]: reads TMEM at `src` into `regs`, lane-major
  // (regs[lane * regs_per_thread + r], see TmemAccess.hpp); the values arrive at tcgen05_wait_ld()
  // (before it, functional mode leaves kTmemLoadPoison there).
  // `half_split` is the 16x32bx2 immediate (column offset of the second half).
  void tcgen05_ld(TmemAddr src, TmemShape shape, std::uint32_t num, std::span<std::uint32_t> regs, bool pack16 = false,
                  std::uint32_t half_split = 0);
  void tcgen05_st(TmemAddr dst, TmemShape shape, std::uint32_t num, std::span<const std::uint32_t> regs,
                  bool unpack16 = false, std::uint32_t half_split = 0);
  WaitAwaiter tcgen05_wait_ld();
  WaitAwaiter tcgen05_wait_st();
  void tcgen05_fence_before_thread_sync();
  void tcgen05_fence_after_thread_sync();
  // A 32-bit ld.shared (e.g. the TMEM address tcgen05.alloc wrote).
  std::uint32_t ld_shared_u32(SmemAddr src);

  // --- wgmma: the SM90 warpgroup MMA (Warp_wgmma.cpp) -------------------------------------------
  // Every warp of a warpgroup (4 consecutive warps from a multiple of 4) executes each of these,
  // in the same order (.sync.aligned); the first warp to reach a wgmma enters it into the SM's
  // pipe, the others must issue the same instruction. Each warp's accumulator holds its 16 rows.
  // wgmma.fence.sync.aligned: orders the warp's register accesses before the wgmmas after it.
  void wgmma_fence();
  // wgmma.mma_async.sync.aligned.<shape> d, a_desc, b_desc, scale_d (false: D = A B, true:
  // D += A B), imm-scale-a/-b (negate), tnspA/B (the shape's majors).
  void wgmma(WgmmaAccumulator& d, GmmaDescriptor a, GmmaDescriptor b, const WgmmaShape& shape, bool scale_d,
             bool negate_a = false, bool negate_b = false);
  // The RS form: A from registers, 32 lanes x 4 registers lane-major (wgmma_a_coord()).
  void wgmma(WgmmaAccumulator& d, std::span<const std::uint32_t> a, GmmaDescriptor b, const WgmmaShape& shape,
             bool scale_d, bool negate_a = false, bool negate_b = false);
  // wgmma.commit_group: the wgmmas issued since the last commit form a group.
  void wgmma_commit_group();
  // wgmma.wait_group N: blocks until at most N of the warp's groups are pending.
  WaitAwaiter wgmma_wait_group(std::uint32_t pending_allowed);

  // --- register pool ---------------------------------------------------------------------------
  // setmaxnreg.inc / .dec.sync.aligned.u32 n (every warp of the warpgroup, same n): .inc blocks
  // until the CTA's pool has the registers; .dec gives them back.
  WaitAwaiter setmaxnreg_inc(std::uint32_t n);
  void setmaxnreg_dec(std::uint32_t n);
  std::uint32_t registers() const { return ws_.registers; }

  // --- CTA synchronisation ------------------------------------------------------------------
  WaitAwaiter bar_sync(std::uint32_t id, std::uint32_t threads);
  void bar_arrive(std::uint32_t id, std::uint32_t threads);
  WaitAwaiter syncthreads();

  // CUDA-core instructions on one pipe (execute(), st_shared_tensor's conversions).
  struct PipeWork {
    CorePipe pipe;
    std::uint32_t instructions;
  };

  // --- generic shared memory (warp-collective) -----------------------------------------------
  // `width`: bytes per thread of each instruction (4: .b32, 8: .v2.b32, 16: .v4.b32; 0: the
  // widest that the address and the length allow, as a compiler vectorizes), so a warp moves 32 x
  // width bytes per instruction. The warp takes smem.instruction_cycles per instruction plus the
  // bytes at smem.warp_bytes_per_cycle, and the bytes pass the SM's SMEM port
  // (smem.bytes_per_cycle, shared by all its warps) in its first free cycles from the warp's clock.
  void st_shared(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width = 0);
  void ld_shared(SmemAddr src, std::span<std::byte> out, std::uint32_t width = 0);
  // The same accesses for tensor data (an epilogue's staged tile, softmax statistics): their bytes
  // move in functional mode only, as TMA's and the tensor cores' do, and in timing mode only their
  // time and checks are taken (a timing run computes no values). Values that steer control flow
  // (a tile index, a flag) go through st_shared / ld_shared, which move their bytes in both modes.
  void st_shared_tensor(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width = 0);
  // ... whose values the warp computes on the way (an epilogue's cvt per pair of accumulators):
  // `made_by`'s instructions issue between the stores, as a compiler interleaves them, so their
  // pipe time overlaps the stores' path instead of adding to it (ours: h200_epilogue.csv
  // "epilogue_st_wg1", 16 cvt + 16 st.shared.b32 per thread of a chunk: 70.2 cycles, the stores
  // alone taking 64 and the cvts 32).
  void st_shared_tensor(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width, PipeWork made_by);
  void ld_shared_tensor(SmemAddr src, std::span<std::byte> out, std::uint32_t width = 0);

  // --- CUDA-core work ------------------------------------------------------------------------
  // `instructions` independent warp instructions on `pipe` (fp32 math, integer/compare, MUFU,
  // conversions). Each takes an issue slot and holds the pipe of the warp's sub-partition for
  // 32 / (lanes / 4) cycles, so warps of one sub-partition share its rate; the warp goes on once
  // its last instruction has been taken.
  void execute(CorePipe pipe, std::uint32_t instructions);
  // A mix of independent instructions on several pipes (e.g. a softmax row: max, FMA, ex2,
  // conversions): the pipes work side by side; the busiest pipe or the issue slots bound it.
  void execute(std::span<const PipeWork> work);
  // Runs `block` (finished on this config) instruction by instruction as its schedule alone
  // gives, sharing the sub-partition's issue slot and pipes with the other warps' blocks running
  // there (hw/sm/SubPartition); resumes when its last result is written.
  struct BlockAwaiter;
  BlockAwaiter run(const CoreBlock& block);

  // --- time ---------------------------------------------------------------------------------
  // Suspends for `cycles` (a dependent computation, a nanosleep).
  WaitAwaiter sleep(Cycle cycles);
  // Charges `cycles` of issue time without suspending (an instruction sequence that needs no
  // other agent's progress).
  void advance(Cycle cycles) {
    ws_.ready += cycles;
    ws_.account(Activity::Compute, cycles);
  }

  // --- awaitables ---------------------------------------------------------------------------
  struct [[nodiscard("co_await it")]] WaitAwaiter {
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
  struct [[nodiscard("co_await it")]] ProbeAwaiter {
    Warp& w;
    std::uint32_t barrier;
    bool by_parity;
    std::uint64_t value;
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h) { w.cta_.park(w.ws_, h); }
    bool await_resume();
  };
  struct [[nodiscard("co_await it")]] AllocAwaiter {
    Warp& w;
    bool await_ready() { return w.cta_.ready_now(w.ws_); }
    void await_suspend(std::coroutine_handle<> h) { w.cta_.park(w.ws_, h); }
    TmemAddr await_resume();
  };
  struct [[nodiscard("co_await it")]] BlockAwaiter {
    Warp& w;
    const CoreBlock& block;
    Cycle start = 0;
    bool await_ready() const { return block.profile().instructions == 0; }
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const;
  };
  struct [[nodiscard("co_await it")]] ArriveAwaiter {
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
  // Takes `work`'s instructions on their pipes of the warp's sub-partition from the warp's clock on
  // (counting their issue slots): when the last one has issued, and the issue slots they take. The
  // warp's clock stays.
  struct PipesReserved {
    Cycle end, issue_slots;
  };
  PipesReserved reserve_pipes(std::span<const PipeWork> work);
  // Generic st.shared / ld.shared of `data` / `out`, their bytes copied when `move_bytes`.
  void store_shared(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width, bool move_bytes,
                    Cycle not_before = 0);
  void load_shared(SmemAddr src, std::span<std::byte> out, std::uint32_t width, bool move_bytes);
  // Takes `bytes` at SMEM `offset` by instructions of `width` bytes per thread through the warp's
  // path and the SM's SMEM port (Sm::smem_port), done no earlier than `not_before`.
  void smem_transfer(const char* op, std::uint32_t offset, std::uint32_t bytes, std::uint32_t width,
                     Cycle not_before = 0);
  void barrier_op(BarrierOp op, MBarrierRef bar, std::uint32_t value);
  void trace_op(std::string_view name, Cycle at, Cycle cost) const;
  // Decodes the instruction descriptor into `instr`, checks the MMA and issues it; returns it
  // decoded (what keep_repeated_mma keeps).
  MmaInstr issue_mma(MmaInstr instr, InstrDescriptor idesc, const char* op);
  // The races an MMA whose operands were checked (A and B's SMEM spans) may make, its issue and
  // the tensor core's work (`cost`: the pipe's cost of it).
  void issue_checked_mma(const MmaInstr& instr, const MmaCost& cost, SmemSpan a_span, SmemSpan b_span);
  // A plain tcgen05.mma (A from SMEM descriptor `a`, or from TMEM address `a` when `a_in_tmem`) as
  // a repeat of the warp's last one of its form (MmaRepeat): checked where it can differ and
  // issued; false, having done nothing, if it is not one.
  bool issue_repeated_mma(bool a_in_tmem, MmaKind kind, TmemAddr d, std::uint64_t a, SmemDescriptor b,
                          InstrDescriptor idesc, bool enable_input_d, std::uint32_t cta_group, const char* op);
  // Keeps the plain MMA `instr`, just issued from these operands, for issue_repeated_mma.
  void keep_repeated_mma(bool a_in_tmem, const MmaInstr& instr, std::uint64_t a, SmemDescriptor b,
                         InstrDescriptor idesc, std::uint32_t cta_group);
  MmaInstr mma_ss(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, bool enable_input_d,
                  std::uint32_t cta_group, const char* op);
  MmaInstr mma_ts(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, bool enable_input_d,
                  std::uint32_t cta_group, const char* op);
  void check_mma_kind(const MmaInstr& instr, const char* op);
  void check_block_scale(const MmaInstr& instr, const char* op);
  void check_sparse(const MmaInstr& instr, const char* op);
  void check_ws(const MmaInstr& instr, const char* op);
  // A TmaInvalid error if a packed FP4/FP6 tensor's box does not start at a group of 16.
  void check_packed_coords(const TensorMap& map, const TensorCoords& coords, const char* op);
  // tma.store and tma.reduce.add: the checks, the issue, the TMA unit's work.
  void bulk_write(const TensorMap& map, SmemAddr src, const TensorCoords& coords, GmemWrite how);
  // barrier.cluster.arrive with (.release, the default) or without (.relaxed) the release fence.
  void cluster_arrive_as(const char* op, bool release);
  // The CTA of `rank`; a located error if the rank is outside the cluster.
  Cta& peer(std::uint32_t rank, const char* op);
  // The CTAs a 16-bit cluster mask names (validated), or just this CTA's rank for mask 0.
  std::uint16_t mask_or_self(std::uint16_t mask, const char* op);
  // A located cta-pair-misuse error unless the cluster forms CTA pairs (and, if `leader`, this is
  // the pair's even rank).
  void check_pair(const char* op, bool leader);
  // A located error unless cta_group is 1, or 2 with a CTA pair (and this CTA its leader if `leader`).
  void check_cta_group(std::uint32_t cta_group, const char* op, bool leader);
  // An InputError naming the config if its SM has no tensor memory (tcgen05 does not exist there).
  void require_tcgen05(const char* op) const;
  // The same if its SM has no wgmma.
  void require_wgmma(const char* op) const;
  void issue_wgmma(WgmmaAccumulator& d, const GmmaDescriptor* a, std::span<const std::uint32_t> a_regs,
                   GmmaDescriptor b, const WgmmaShape& shape, bool scale_d, bool negate_a, bool negate_b);
  friend class WgmmaAccumulator;
  // A located tma-invalid error unless the tensor map lies inside allocated GMEM.
  void check_map_in_gmem(const TensorMap& map, const char* op);
  // Decodes and validates an operand's descriptor, through the tensor core's memo of that operand.
  SmemDescriptorFields decode_operand(SmemOperandMemo& memo, SmemDescriptor d, const char* which, const char* op);
  // A located smem-out-of-bounds error unless the bytes an operand's descriptor spans lie in SMEM.
  void check_operand_in_smem(SmemSpan span, const char* which, const char* op) {
    if (span.end > cta_.smem().size()) [[unlikely]]
      operand_outside_smem(span, which, op);
  }
  [[noreturn, gnu::cold]] void operand_outside_smem(SmemSpan span, const char* which, const char* op);
  // smem_transfer's located error for an access width that is invalid or misaligned.
  [[noreturn, gnu::cold]] void smem_width_invalid(const char* op, std::uint32_t offset, std::uint32_t width);
  WaitAwaiter wait_until(Cycle at);
  // Validates a tcgen05.ld/st and reserves the warp quadrant's TMEM port; returns the transfer's end.
  Cycle tmem_transfer(const char* op, TmemAddr addr, TmemShape shape, std::uint32_t num, std::size_t regs,
                      bool pack16, std::uint32_t half_split);
  [[noreturn, gnu::cold]] void tmem_transfer_invalid(const char* op, TmemShape shape, std::uint32_t num,
                                                     std::size_t regs, std::uint32_t half_split);
  [[gnu::cold]] void trace_tmem_transfer(const char* op, TmemAddr addr, TmemShape shape, std::uint32_t num,
                                         bool pack16, std::uint32_t bytes, Cycle issued, Cycle start, Cycle end);

  WarpState& ws_;
  Cta& cta_;
  std::uint32_t grid_ctas_;
};

}  // namespace bwsim
