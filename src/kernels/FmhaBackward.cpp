#include "bwsim/kernels/FmhaBackward.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <cstring>
#include <span>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernels/AttentionBackwardCode.hpp"
#include "bwsim/kernels/AttentionCommon.hpp"
#include "bwsim/kernels/AttentionOperands.hpp"
#include "bwsim/kernels/FmhaBackwardCheck.hpp"
#include "bwsim/kernels/FmhaBackwardSteps.hpp"

namespace bwsim {

const char* name_of(FmhaBwdBug bug) {
  switch (bug) {
    case FmhaBwdBug::None: return "none";
    case FmhaBwdBug::DsBeforeDp: return "ds-before-dp";
    case FmhaBwdBug::DqSkipsTile: return "dq-skips-tile";
  }
  return "?";
}

std::optional<FmhaBwdBug> parse_fmha_bwd_bug(std::string_view name) {
  for (FmhaBwdBug b : {FmhaBwdBug::None, FmhaBwdBug::DsBeforeDp, FmhaBwdBug::DqSkipsTile})
    if (name == name_of(b)) return b;
  return std::nullopt;
}

namespace {

using attention::k_major;
using attention::kChunk;
using attention::kChunkBytes;
using attention::mn_major;
constexpr std::uint32_t kTile = attention::kTileRows;  // keys per CTA, queries per iteration
constexpr std::uint32_t kHalf = kTile / 2;             // queries per compute warpgroup
constexpr std::uint32_t kDqCols = 32;                  // dQ columns per TMA reduction
constexpr double kLog2e = std::numbers::log2e;
constexpr std::int32_t i32(std::uint64_t v) { return static_cast<std::int32_t>(v); }

// Warp roles (FlashAttention-4's SM100 backward).
enum class Role { DqReduce, Compute, Mma, Load, Relay, Empty };
Role role_of(std::uint32_t warp) {
  if (warp < 4) return Role::DqReduce;
  if (warp < 12) return Role::Compute;
  if (warp == 12) return Role::Mma;
  if (warp == 13) return Role::Load;
  if (warp == 14) return Role::Relay;
  return Role::Empty;
}

// mbarriers: Q as S's B operand has q_stages (2, or 1 for a CTA pair), a pair's Q^T (dK's B) one,
// the row statistics (LSE log2, D) two, the rest one. A pair's MMA waits on its leader's barriers: loads of both CTAs complete
// there (cta_group::2), both CTAs' warps arrive there; its commits reach both CTAs (multicast).
enum Barrier : std::uint32_t {
  KvFull, QFull, QEmpty = QFull + 2, StatsFull = QEmpty + 2, StatsEmpty = StatsFull + 2, DoFull = StatsEmpty + 2,
  DoEmpty, SFull, PFull, DpFull, DsFull, DsEmpty, DqFull, DqEmpty, DkvFull,
  XchgFull,  // the peer's half of dS has landed in this CTA's SMEM (pair only)
  XchgDone,  // the leader's: both CTAs' exchanged halves are in (pair only)
  QtFull, QtEmpty,  // a pair's Q^T
  kBarriers
};
constexpr std::uint32_t kComputeWarps = 8, kReduceWarps = 4;
constexpr std::uint32_t kComputeSync = 1;  // bar.sync id of the two compute warpgroups
constexpr std::uint32_t kBox = 32 * kDqCols * 4;  // a dQ reduction: 32 rows x 32 fp32, 4 KiB

// A CTA's work: one 128-key tile (keys key0..) of one query head and the Q tiles that see it (a
// pair's two CTAs take the same Q tiles).
struct Unit {
  std::uint32_t b = 0, h = 0, key0 = 0;
  std::uint32_t m_begin = 0, m_end = 0;
};

// SMEM: barriers and the TMEM address in the first KiB; the statistics stages (LSE log2 and D,
// 128 floats each) in the next 2 KiB; then K and V (this CTA's keys, K-major), the Q stages and
// dO as the S / dP MMAs' K-major B (a pair: each CTA its 64 queries) and as dK / dV's MN-major B
// (one CTA: the same bytes; a pair: all queries of the CTA's half of the head dim, Q^T and
// dO^T), K as dQ's MN-major B (one CTA: K itself; a pair: all 256 keys of its half of the head
// dim, K^T), dS as dQ's MN-major A (one CTA: 128 keys x 128 queries; a pair: 256 keys x its 64
// queries, the peer's keys arriving over DSMEM from the exchange box), and each reduce warp's dQ
// boxes. After the last MMA, each compute warp stages its dK and dV rows in its own slot from Q.
struct Layout {
  bool pair = false;
  std::uint32_t chunks = 2, q_stages = 2, dq_slots = 2;
  std::uint32_t tmem_slot = 8 * kBarriers, stats = 1024, k = 3072, v = 0, q = 0, qt = 0, d_o = 0, dot = 0, kt = 0,
                ds = 0, xchg = 0, dq = 0, smem = 0;
  std::uint32_t slot_bytes = 0;  // per compute warp, for dK and dV
  std::uint32_t tile_bytes() const { return chunks * kChunkBytes; }
  std::uint32_t b_rows() const { return pair ? kTile / 2 : kTile; }  // Q / dO rows a CTA gives S / dP
  std::uint32_t b_chunk() const { return b_rows() * 128; }           // bytes of one head-dim chunk of them
  std::uint32_t q_bytes() const { return chunks * b_chunk(); }
  std::uint32_t qt_bytes() const { return pair ? kChunkBytes : 0; }
  SmemAddr q_k(std::uint32_t s) const { return SmemAddr{q + s * q_bytes()}; }
  SmemAddr q_mn(std::uint32_t s) const { return pair ? SmemAddr{qt} : q_k(s); }
  SmemAddr do_k() const { return SmemAddr{d_o}; }
  SmemAddr do_mn() const { return SmemAddr{pair ? dot : d_o}; }
  SmemAddr k_mn() const { return SmemAddr{pair ? kt : k}; }  // dQ's B
  std::uint32_t dq_keys() const { return pair ? 2 * kTile : kTile; }
  SmemAddr lse(std::uint32_t s) const { return SmemAddr{stats + s * 1024}; }
  SmemAddr delta(std::uint32_t s) const { return SmemAddr{stats + s * 1024 + 512}; }
  SmemAddr dq_box(std::uint32_t warp, std::uint32_t slot) const { return SmemAddr{dq + (warp * dq_slots + slot) * kBox}; }
  static MBarrierRef bar(std::uint32_t b, std::uint32_t stage = 0) { return MBarrierRef{8 * (b + stage)}; }
};

Layout layout(const HardwareConfig& config, std::uint32_t d, bool gqa, bool pair) {
  Layout l;
  l.pair = pair;
  l.chunks = d / kChunk;
  l.q_stages = pair ? 1 : 2;
  l.dq_slots = pair ? 1 : 2;
  l.v = l.k + l.tile_bytes();
  l.q = l.v + l.tile_bytes();
  l.qt = l.q + l.q_stages * l.q_bytes();  // a pair's Q^T after its Q half
  l.d_o = l.qt + l.qt_bytes();
  l.dot = l.d_o + l.q_bytes();
  l.kt = l.dot + l.qt_bytes();
  l.ds = l.kt + (pair ? 2 * kChunkBytes : 0);
  l.xchg = l.ds + 2 * kChunkBytes;
  l.dq = l.xchg + (pair ? kChunkBytes : 0);
  l.smem = l.dq + kReduceWarps * l.dq_slots * kBox;
  l.slot_bytes = 2 * 32 * (d / 2) * (gqa ? 4 : 2);  // 32 rows of half of dK and of dV
  if (l.smem > config.sm.max_smem_per_cta)
    throw InputError(fmt::format("head dim {}: the backward's tiles need {} bytes of SMEM; the {} config allows {} per CTA",
                                 d, l.smem, config.name, config.sm.max_smem_per_cta));
  return l;
}

struct Problem {
  const FmhaBwdParams& p;
  std::uint32_t kv_heads, d;
  std::vector<std::uint32_t> lens;
  float scale_log2;  // softmax_scale * log2(e)
  float scale;       // softmax_scale
  std::uint32_t key_blocks;  // key blocks of a CTA (or pair) in the padded length: dQ's partials per head
  bool gqa() const { return kv_heads != p.heads; }
};

struct Maps {
  TensorMap q, k, v, d_o;          // 16-bit, 64 x 128-row boxes, 128-byte swizzle
  TensorMap q_half, do_half;       // the same, 64-row boxes (a pair's halves of a Q / dO tile)
  TensorMap lse_log2, delta;       // fp32 rows of 128
  TensorMap dq_acc;                // fp32, 32 x 32-row boxes (a reduce warp's): dQaccum, or the partials
  TensorMap dk_out, dv_out;        // d/2 x 32-row boxes: 16-bit (MHA) or the fp32 sums (GQA)
};

using attention::tmem_registers;

struct Kernel {
  const Problem& pr;
  const std::vector<Unit>& units;
  const Maps& m;
  Layout l;
  std::uint32_t col_s = 0, col_dv = 0, col_dp = 0, col_dk = 0, col_dq = 0;  // TMEM columns
  InstrDescriptor qk_desc, ts_desc, dq_desc;
  const CoreBlock &p_code, &p_masked_code, &ds_code, &convert_code;

  std::uint32_t group() const { return l.pair ? 2 : 1; }  // the MMAs' cta_group
  std::uint16_t both() const { return l.pair ? 0b11 : 0; }  // a commit's multicast mask
  std::uint32_t bh(const Unit& u) const { return u.b * pr.p.heads + u.h; }
  std::uint32_t kv_bh(const Unit& u) const { return u.b * pr.kv_heads + u.h / (pr.p.heads / pr.kv_heads); }
  // The first key of the unit's pair (of the unit itself without pairs).
  std::uint32_t pair_key0(const Unit& u) const { return l.pair ? u.key0 / (2 * kTile) * 2 * kTile : u.key0; }
  // Whether Q tile `mt` needs a mask for the unit's keys: some key after some query (causal), or
  // past the sequence's end.
  bool masked(const Unit& u, std::uint32_t mt) const {
    const std::uint32_t len = pr.lens[u.b];
    return (pr.p.causal && u.key0 + kTile - 1 > mt * kTile) || (mt + 1) * kTile > len || u.key0 + kTile > len;
  }
  // An arrival on barrier `b` that the MMA warp waits on: the pair leader's.
  void arrive_for_mma(Warp& w, std::uint32_t b) const {
    if (l.pair)
      w.mbarrier_arrive(w.mapa(Layout::bar(b), 0));
    else
      w.mbarrier_arrive(Layout::bar(b));
  }

  Task operator()(Warp& w) const {
    const Unit& u = units[w.cta_idx()];
    const Role role = role_of(w.warp_idx());
    if (role == Role::Mma) {
      static constexpr const char* kNames[kBarriers] = {
          "kv.full",  "q.full[0]", "q.full[1]", "q.empty[0]", "q.empty[1]", "stats.full[0]", "stats.full[1]",
          "stats.empty[0]", "stats.empty[1]", "do.full", "do.empty", "s.full", "p.full", "dp.full", "ds.full",
          "ds.empty", "dq.full", "dq.empty", "dkv.full", "xchg.full", "xchg.done", "qt.full", "qt.empty"};
      for (std::uint32_t b = 0; b < kBarriers; ++b) {
        const std::uint32_t count = b == StatsEmpty || b == StatsEmpty + 1 ? kComputeWarps
                                    : b == PFull || b == DsFull          ? kComputeWarps * group()
                                    : b == DqEmpty                       ? kReduceWarps * group()
                                    : b == XchgDone                      ? 2
                                                                         : 1;
        w.mbarrier_init(Layout::bar(b), count, kNames[b]);
      }
      if (l.pair) w.fence_mbarrier_init();
      co_await w.tcgen05_alloc(SmemAddr{l.tmem_slot}, 512, group());
      w.tcgen05_relinquish_alloc_permit();
    }
    co_await sync(w);  // a pair: every barrier of both CTAs initialised before any peer signals it
    const TmemAddr tmem{w.ld_shared_u32(SmemAddr{l.tmem_slot})};
    // Registers per role (flash_bwd_sm100.py, 1-CTA): reduce 152, compute 136, the last
    // warpgroup 88 (FlashAttention-4 gives its two idle warps 24; setmaxnreg takes one count per
    // warpgroup here). The .inc waits until the last warpgroup has given its registers back.
    if (role == Role::DqReduce)
      co_await w.setmaxnreg_inc(152);
    else if (role == Role::Compute)
      co_await w.setmaxnreg_inc(136);
    else
      w.setmaxnreg_dec(88);
    switch (role) {
      case Role::Load: co_await load(w, u); break;
      case Role::Mma:
        if (w.cluster_ctarank() % 2 == 0)
          co_await mma(w, u, tmem);
        else
          w.set_role("MMA (the leader's)");
        break;
      case Role::Compute: co_await compute(w, u, tmem); break;
      case Role::DqReduce: co_await reduce_dq(w, u, tmem); break;
      case Role::Relay:
        if (l.pair) co_await relay(w, u);
        else w.set_role("Empty");
        break;
      case Role::Empty: w.set_role("Empty"); break;
    }
    co_await sync(w);  // a pair: neither CTA's TMEM freed while the leader's MMAs may use it
    if (role == Role::Mma) w.tcgen05_dealloc(tmem, 512, group());
  }

  Task sync(Warp& w) const {
    if (!l.pair) {
      co_await w.syncthreads();
    } else {
      w.cluster_arrive();
      co_await w.cluster_wait();
    }
  }

  // K, V (and a pair's K^T) once; per Q tile j: Q_j (a pair: each CTA its 64 rows), the row
  // statistics, dO_j (a pair: its 64 rows and its half of the head dim of all 128, dO^T), and a
  // pair's Q^T (its half of the head dim of all 128 queries). A pair's loads
  // complete on the leader's barriers, which the leader arms with both CTAs' bytes.
  Task load(Warp& w, const Unit& u) const {
    w.set_role("Load");
    const std::uint32_t c = w.cluster_ctarank() % 2;
    const bool arms = c == 0;
    const TmaLoadFlags flags{.cta_group_2 = l.pair};
    const std::uint32_t kv_bytes = 2 * l.tile_bytes() + (l.pair ? 2 * kChunkBytes : 0);
    if (arms) w.mbarrier_arrive_expect_tx(Layout::bar(KvFull), group() * kv_bytes);
    for (std::uint32_t ch = 0; ch < l.chunks; ++ch)
      for (const bool is_k : {true, false})
        w.tma_load(is_k ? m.k : m.v, SmemAddr{(is_k ? l.k : l.v) + ch * kChunkBytes}, Layout::bar(KvFull),
                   {i32(ch * kChunk), i32(u.key0), i32(kv_bh(u))}, flags);
    if (l.pair)  // K^T: the pair's 256 keys, this CTA's half of the head dim
      for (std::uint32_t half = 0; half < 2; ++half)
        w.tma_load(m.k, SmemAddr{l.kt + half * kChunkBytes}, Layout::bar(KvFull),
                   {i32(c * kChunk), i32(pair_key0(u) + half * kTile), i32(kv_bh(u))}, flags);
    // Q (or dO) of tile mt as this CTA gives S (dP) its B: all rows, or a pair's 64; and a
    // pair's MN-major half of the head dim for dK (dV).
    auto load_k_major = [&](const TensorMap& full, const TensorMap& half, SmemAddr at, MBarrierRef bar, std::uint32_t mt) {
      for (std::uint32_t ch = 0; ch < l.chunks; ++ch)
        w.tma_load(l.pair ? half : full, at + ch * l.b_chunk(), bar,
                   {i32(ch * kChunk), i32(mt * kTile + c * l.b_rows()), i32(bh(u))}, flags);
    };
    auto load_mn_half = [&](const TensorMap& full, SmemAddr at, MBarrierRef bar, std::uint32_t mt) {
      w.tma_load(full, at, bar, {i32(c * kChunk), i32(mt * kTile), i32(bh(u))}, flags);
    };
    for (std::uint32_t j = 0, mt = u.m_begin; mt < u.m_end; ++j, ++mt) {
      const std::uint32_t s = j % l.q_stages;
      if (j >= l.q_stages) co_await w.mbarrier_wait(Layout::bar(QEmpty, s), (j / l.q_stages - 1) & 1u);
      if (arms) w.mbarrier_arrive_expect_tx(Layout::bar(QFull, s), group() * l.q_bytes());
      load_k_major(m.q, m.q_half, l.q_k(s), Layout::bar(QFull, s), mt);
      const std::uint32_t st = j % 2;
      if (j >= 2) co_await w.mbarrier_wait(Layout::bar(StatsEmpty, st), (j / 2 - 1) & 1u);
      w.mbarrier_arrive_expect_tx(Layout::bar(StatsFull, st), 2 * kTile * 4);
      w.tma_load(m.lse_log2, l.lse(st), Layout::bar(StatsFull, st), {i32(mt * kTile), i32(bh(u))});
      w.tma_load(m.delta, l.delta(st), Layout::bar(StatsFull, st), {i32(mt * kTile), i32(bh(u))});
      if (j >= 1) co_await w.mbarrier_wait(Layout::bar(DoEmpty), (j - 1) & 1u);
      if (arms) w.mbarrier_arrive_expect_tx(Layout::bar(DoFull), group() * (l.q_bytes() + l.qt_bytes()));
      load_k_major(m.d_o, m.do_half, l.do_k(), Layout::bar(DoFull), mt);
      if (l.pair) load_mn_half(m.d_o, l.do_mn(), Layout::bar(DoFull), mt);
      // A pair's Q^T last: its stage is free only once dK_{j-1} has read it, after dV_{j-1}.
      if (l.pair) {
        if (j >= 1) co_await w.mbarrier_wait(Layout::bar(QtEmpty), (j - 1) & 1u);
        if (arms) w.mbarrier_arrive_expect_tx(Layout::bar(QtFull), group() * l.qt_bytes());
        load_mn_half(m.q, l.q_mn(0), Layout::bar(QtFull), mt);
      }
    }
  }

  // S^T = K Q^T or dP^T = V dO^T (M = keys, N = queries, K = the head dim), both K-major; a
  // pair's B rows are each CTA's 64 queries.
  void mma_qk(Warp& w, TmemAddr d, std::uint32_t a, SmemAddr b) const {
    for (std::uint32_t kb = 0; kb < pr.d / 16; ++kb) {
      const std::uint32_t c = kb / 4, within = (kb % 4) * 32;
      w.tcgen05_mma(MmaKind::F16, d, k_major(SmemAddr{a + c * kChunkBytes}, within),
                    k_major(SmemAddr{b.offset + c * l.b_chunk()}, within), qk_desc, kb > 0, group());
    }
  }
  // dV += P^T dO or dK += dS^T Q: A (keys x queries, 16-bit pairs) from TMEM column `a`, B the
  // tile MN-major (N = the head dim, K = queries).
  void mma_ts(Warp& w, TmemAddr d, TmemAddr a, SmemAddr b, bool accumulate) const {
    for (std::uint32_t kb = 0; kb < kTile / 16; ++kb)
      w.tcgen05_mma(MmaKind::F16, d, a + kb * 8, mn_major(b, kb * 16), ts_desc, accumulate || kb > 0, group());
  }

  // FlashAttention-4's order: S_0, dP_0, dV_0; per tile j: S_{j+1}, dK_j, dQ_j, dP_{j+1},
  // dV_{j+1}. dQ_j and dP_{j+1} write dS_j's columns (dQ beside them on a pair): dK_j reads them
  // first (the pipe runs in order), and dP_{j+1} waits until the reduce warps have read dQ_j.
  Task mma(Warp& w, const Unit& u, TmemAddr tmem) const {
    w.set_role("MMA");
    const std::uint32_t n = u.m_end - u.m_begin;
    auto s_mma = [&](std::uint32_t j) -> Task {
      const std::uint32_t s = j % l.q_stages;
      co_await w.mbarrier_wait(Layout::bar(QFull, s), (j / l.q_stages) & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_qk(w, tmem + col_s, l.k, l.q_k(s));
      w.tcgen05_commit(Layout::bar(SFull), both());
      if (l.pair) w.tcgen05_commit(Layout::bar(QEmpty, s), both());  // S is a pair's only reader of its Q rows
    };
    auto dp_dv = [&](std::uint32_t j) -> Task {
      co_await w.mbarrier_wait(Layout::bar(DoFull), j & 1u);
      if (j > 0) co_await w.mbarrier_wait(Layout::bar(DqEmpty), (j - 1) & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_qk(w, tmem + col_dp, l.v, l.do_k());
      w.tcgen05_commit(Layout::bar(DpFull), both());
      co_await w.mbarrier_wait(Layout::bar(PFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_ts(w, tmem + col_dv, tmem + col_s, l.do_mn(), j > 0);
      w.tcgen05_commit(Layout::bar(DoEmpty), both());
    };
    co_await w.mbarrier_wait(Layout::bar(KvFull), 0);
    co_await s_mma(0);
    co_await dp_dv(0);
    for (std::uint32_t j = 0; j < n; ++j) {
      if (j + 1 < n) co_await s_mma(j + 1);
      co_await w.mbarrier_wait(Layout::bar(DsFull), j & 1u);
      if (l.pair) co_await w.mbarrier_wait(Layout::bar(QtFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_ts(w, tmem + col_dk, tmem + col_dp, l.q_mn(j % l.q_stages), j > 0);
      w.tcgen05_commit(l.pair ? Layout::bar(QtEmpty) : Layout::bar(QEmpty, j % l.q_stages), both());
      if (l.pair) co_await w.mbarrier_wait(Layout::bar(XchgDone), j & 1u);  // the peer's dS rows are in
      for (std::uint32_t kb = 0; kb < l.dq_keys() / 16; ++kb)  // dQ_j = dS_j K: A and B MN-major from SMEM
        w.tcgen05_mma(MmaKind::F16, tmem + col_dq, mn_major(SmemAddr{l.ds}, kb * 16), mn_major(l.k_mn(), kb * 16),
                      dq_desc, kb > 0, group());
      w.tcgen05_commit(Layout::bar(DqFull), both());
      w.tcgen05_commit(Layout::bar(DsEmpty), both());
      if (j + 1 < n) co_await dp_dv(j + 1);
    }
    w.tcgen05_commit(Layout::bar(DkvFull), both());
  }
  // Warp 4 + 4g + q: keys 32q.. of the tile (its TMEM lane quadrant), queries 64g.. of each Q
  // tile. P and dS overwrite S and dP in TMEM: each warpgroup writes columns the other reads, so
  // both finish reading first (the 256-thread named barrier).
  Task compute(Warp& w, const Unit& u, TmemAddr tmem) const {
    const std::uint32_t q = w.warp_idx() % 4, g = (w.warp_idx() - 4) / 4;
    w.set_role(fmt::format("Compute{} w{}", g, q));
    std::vector<std::uint32_t> s_own, p_own, dp_own, ds_own;
    const std::span<std::uint32_t> s = tmem_registers(w, s_own, 32 * kHalf), pbits = tmem_registers(w, p_own, 32 * kHalf / 2),
                                   dp = tmem_registers(w, dp_own, 32 * kHalf), dsbits = tmem_registers(w, ds_own, 32 * kHalf / 2);
    std::vector<float> p(32 * kHalf), lse(kHalf), delta(kHalf), ds(kHalf);
    std::vector<std::byte> ds_rows(32 * 128);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    const bool ds_before_dp = pr.p.bug == FmhaBwdBug::DsBeforeDp;
    for (std::uint32_t j = 0, mt = u.m_begin; mt < u.m_end; ++j, ++mt) {
      const std::uint32_t st = j % 2;
      co_await w.mbarrier_wait(Layout::bar(StatsFull, st), (j / 2) & 1u);
      w.ld_shared_tensor(l.lse(st) + 4 * kHalf * g, std::as_writable_bytes(std::span(lse)));
      w.ld_shared_tensor(l.delta(st) + 4 * kHalf * g, std::as_writable_bytes(std::span(delta)));
      co_await w.mbarrier_wait(Layout::bar(SFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      w.tcgen05_ld(lanes + (col_s + kHalf * g), TmemShape::S32x32b, kHalf, s);
      co_await w.tcgen05_wait_ld();
      if (w.functional()) compute_p(u, mt, q, g, s, lse, p, pbits);
      co_await w.run(masked(u, mt) ? p_masked_code : p_code);
      co_await w.bar_sync(kComputeSync, 32 * kComputeWarps);  // every warp's S read
      w.tcgen05_st(lanes + (col_s + kHalf / 2 * g), TmemShape::S32x32b, kHalf / 2, pbits);
      co_await w.tcgen05_wait_st();
      w.tcgen05_fence_before_thread_sync();
      arrive_for_mma(w, PFull);
      // The mutant waits for the previous tile's dP (a phase long complete) instead of this one's.
      if (!ds_before_dp || j == 0) co_await w.mbarrier_wait(Layout::bar(DpFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      w.tcgen05_ld(lanes + (col_dp + kHalf * g), TmemShape::S32x32b, kHalf, dp);
      co_await w.tcgen05_wait_ld();
      if (w.functional()) compute_ds(dp, delta, p, ds, dsbits, ds_rows, q);
      co_await w.run(ds_code);
      w.mbarrier_arrive(Layout::bar(StatsEmpty, st));
      co_await w.bar_sync(kComputeSync, 32 * kComputeWarps);  // every warp's dP read
      w.tcgen05_st(lanes + (col_dp + kHalf / 2 * g), TmemShape::S32x32b, kHalf / 2, dsbits);
      if (j > 0) co_await w.mbarrier_wait(Layout::bar(DsEmpty), (j - 1) & 1u);  // dQ_{j-1} read sdS
      write_ds(w, q, g, ds_rows);
      co_await w.tcgen05_wait_st();
      w.tcgen05_fence_before_thread_sync();
      arrive_for_mma(w, DsFull);
    }
    co_await epilogue(w, u, tmem, q, g);
  }

  // This warp's 32 keys x 64 queries of dS into dQ's A operand: one CTA's own SMEM (chunk g);
  // a pair's CTA c holds its 64 queries for all 256 keys, so warpgroup g == c writes its own rows
  // and the other sends them to the peer (rows of this CTA's keys) with a bulk copy from the
  // exchange box.
  void write_ds(Warp& w, std::uint32_t q, std::uint32_t g, std::span<const std::byte> rows) const {
    const std::uint32_t c = w.cluster_ctarank() % 2, bytes = static_cast<std::uint32_t>(rows.size());
    if (!l.pair) {
      w.st_shared_tensor(SmemAddr{l.ds + g * kChunkBytes + q * bytes}, rows);
      w.fence_proxy_async();
      return;
    }
    const std::uint32_t at = l.ds + (c * kTile + 32 * q) * 128;
    if (g == c) {
      w.st_shared_tensor(SmemAddr{at}, rows);
      w.fence_proxy_async();
      return;
    }
    const SmemAddr box{l.xchg + q * bytes};
    w.st_shared_tensor(box, rows);
    w.fence_proxy_async();
    w.bulk_copy_to_cluster(w.mapa(SmemAddr{at}, g), box, bytes, w.mapa(Layout::bar(XchgFull), g));
  }

  // A pair's relay: once the peer's 4 warps' dS rows have landed here, tell the leader.
  Task relay(Warp& w, const Unit& u) const {
    w.set_role("dS relay");
    for (std::uint32_t j = 0; j < u.m_end - u.m_begin; ++j) {
      w.mbarrier_arrive_expect_tx(Layout::bar(XchgFull), 4 * 32 * 128);
      co_await w.mbarrier_wait(Layout::bar(XchgFull), j & 1u);
      w.mbarrier_arrive(w.mapa(Layout::bar(XchgDone), 0));
    }
  }

  // P = exp2(s * scale_log2 - lse_log2) per (key lane, query column); 0 where masked.
  void compute_p(const Unit& u, std::uint32_t mt, std::uint32_t q, std::uint32_t g, std::span<const std::uint32_t> s,
                 const std::vector<float>& lse, std::vector<float>& p, std::span<std::uint32_t> pbits) const {
    const std::uint32_t len = pr.lens[u.b];
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      const std::uint32_t key = u.key0 + 32 * q + lane;
      for (std::uint32_t c = 0; c < kHalf; ++c) {
        const std::uint32_t query = mt * kTile + kHalf * g + c;
        const bool live = key < len && query < len && !(pr.p.causal && key > query);
        const float x = std::bit_cast<float>(s[lane * kHalf + c]) * pr.scale_log2 - lse[c];
        p[lane * kHalf + c] = live ? std::exp2(x) : 0.0f;
      }
      pack(std::span(p).subspan(lane * kHalf, kHalf), pbits.subspan(lane * kHalf / 2, kHalf / 2));
    }
  }

  // dS = P o (dP - D), packed for TMEM and, MN-major, as this warp's 32 rows (keys) of the
  // 64-query chunk in SMEM (128-byte swizzle).
  void compute_ds(std::span<const std::uint32_t> dp, const std::vector<float>& delta, const std::vector<float>& p,
                  std::vector<float>& ds,
                  std::span<std::uint32_t> dsbits, std::vector<std::byte>& rows, std::uint32_t q) const {
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      for (std::uint32_t c = 0; c < kHalf; ++c)
        ds[c] = p[lane * kHalf + c] * (std::bit_cast<float>(dp[lane * kHalf + c]) - delta[c]);
      const auto packed = dsbits.subspan(lane * kHalf / 2, kHalf / 2);
      pack(ds, packed);
      const std::uint32_t row = 32 * q + lane;  // within the 1024-byte-aligned chunk
      for (std::uint32_t c = 0; c < kHalf / 2; ++c)
        std::memcpy(&rows[swizzle_offset(Swizzle::B128, row * 128 + c * 4) - 32 * q * 128], &packed[c], 4);
    }
  }

  // Pairs of floats to 16-bit pairs (the F2FP the compute code counts).
  void pack(std::span<const float> v, std::span<std::uint32_t> out) const {
    for (std::size_t c = 0; c < out.size(); ++c) {
      std::uint16_t lo = 0, hi = 0;
      store_from_float(pr.p.dtype, v[2 * c], reinterpret_cast<std::byte*>(&lo));
      store_from_float(pr.p.dtype, v[2 * c + 1], reinterpret_cast<std::byte*>(&hi));
      out[c] = lo | static_cast<std::uint32_t>(hi) << 16;
    }
  }

  // After the last MMA: this warp's 32 keys of half the columns of dV, then of dK (times the
  // softmax scale), from TMEM to its SMEM slot and out: 16-bit stores, or with GQA fp32 TMA
  // reductions into the K/V head's sums (the group's query heads add up there).
  Task epilogue(Warp& w, const Unit& u, TmemAddr tmem, std::uint32_t q, std::uint32_t g) const {
    co_await w.mbarrier_wait(Layout::bar(DkvFull), 0);
    w.tcgen05_fence_after_thread_sync();
    const std::uint32_t cols = pr.d / 2, elem = pr.gqa() ? 4 : 2;
    std::vector<std::uint32_t> own;
    const std::span<std::uint32_t> regs = tmem_registers(w, own, 32 * cols);
    std::vector<std::byte> rows(32 * cols * elem);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    for (std::uint32_t t = 0; t < 2; ++t) {  // dV, dK
      const bool dk = t == 1;
      w.tcgen05_ld(lanes + ((dk ? col_dk : col_dv) + cols * g), TmemShape::S32x32b, cols, regs);
      co_await w.tcgen05_wait_ld();
      co_await w.run(convert_code);
      if (w.functional())
        for (std::uint32_t i = 0; i < 32 * cols; ++i) {
          const float v = std::bit_cast<float>(regs[i]) * (dk ? pr.scale : 1.0f);
          if (pr.gqa())
            std::memcpy(&rows[i * 4], &v, 4);
          else
            store_from_float(pr.p.dtype, v, &rows[i * 2]);
        }
      const SmemAddr slot{l.q + (w.warp_idx() - 4) * l.slot_bytes + t * 32 * cols * elem};
      w.st_shared_tensor(slot, rows);
      w.fence_proxy_async();
      const TensorMap& map = dk ? m.dk_out : m.dv_out;
      const TensorCoords at{i32(cols * g), i32(u.key0 + 32 * q), i32(kv_bh(u))};
      if (pr.gqa())
        w.tma_reduce_add(map, slot, at);
      else
        w.tma_store(map, slot, at);
    }
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
  }

  // Per Q tile: dQ_j from TMEM (this warp's lanes), released at once; then 32 columns at a time
  // through this warp's SMEM boxes, each added to dQaccum by a TMA reduction. One CTA's lanes
  // are its 128 queries with every column; a pair's (Layout B) its 64 queries with half the
  // columns in lanes 0-63 and the other half in 64-127.
  Task reduce_dq(Warp& w, const Unit& u, TmemAddr tmem) const {
    const std::uint32_t q = w.warp_idx(), c = w.cluster_ctarank() % 2;
    w.set_role(fmt::format("dQ reduce w{}", q));
    const std::uint32_t cols = l.pair ? pr.d / 2 : pr.d;
    const std::uint32_t row0 = l.pair ? c * kTile / 2 + 32 * (q % 2) : 32 * q, col0 = l.pair ? q / 2 * cols : 0;
    std::vector<std::uint32_t> own;
    const std::span<std::uint32_t> regs = tmem_registers(w, own, 32 * cols);
    std::vector<std::byte> rows(kBox);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    std::uint32_t boxes = 0;
    for (std::uint32_t j = 0, mt = u.m_begin; mt < u.m_end; ++j, ++mt) {
      co_await w.mbarrier_wait(Layout::bar(DqFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      w.tcgen05_ld(lanes + col_dq, TmemShape::S32x32b, cols, regs);
      co_await w.tcgen05_wait_ld();
      w.tcgen05_fence_before_thread_sync();
      arrive_for_mma(w, DqEmpty);
      if (pr.p.bug == FmhaBwdBug::DqSkipsTile && j == 1) continue;
      for (std::uint32_t b = 0; b < cols / kDqCols; ++b, ++boxes) {
        const SmemAddr box = l.dq_box(q, boxes % l.dq_slots);
        if (boxes >= l.dq_slots) co_await w.bulk_wait_group_read(l.dq_slots - 1);  // that box's last add read it
        if (w.functional())
          for (std::uint32_t r = 0; r < 32; ++r)
            std::memcpy(&rows[r * kDqCols * 4], &regs[r * cols + b * kDqCols], kDqCols * 4);
        w.st_shared_tensor(box, rows);
        w.fence_proxy_async();
        if (pr.p.dq_path == FmhaBwdParams::DqPath::Reduce) {
          w.tma_reduce_add(m.dq_acc, box, {i32(col0 + b * kDqCols), i32(mt * kTile + row0), i32(bh(u))});
        } else {  // this key block's own partial of dQ
          const std::uint32_t part = bh(u) * pr.key_blocks + u.key0 / (group() * kTile);
          w.tma_store(m.dq_acc, box, {i32(col0 + b * kDqCols), i32(mt * kTile + row0), i32(part)});
        }
        w.bulk_commit_group();
      }
    }
    co_await w.bulk_wait_group(0);
  }
};

void validate(const HardwareConfig& config, const FmhaBwdParams& p) {
  if (config.tmem.columns < 512)
    throw InputError(fmt::format("the {} config has {} TMEM columns; fmha_bwd needs 512 (a Blackwell config such as "
                                 "sim_configs/b200.yaml)",
                                 config.name, config.tmem.columns));
  if (p.headdim != 64 && p.headdim != 128)
    throw InputError(fmt::format("--headdim {}: the backward supports head dims 64 and 128", p.headdim));
  if (p.dtype != DataType::BF16 && p.dtype != DataType::F16)
    throw InputError(fmt::format("--dtype {}: Q, K, V, O, dO are bf16 or f16", name_of(p.dtype)));
  if (p.two_cta && p.headdim != 128)
    throw InputError(fmt::format("--cta-group 2 with head dim {}: the pair form splits the head dim in two 64-column "
                                 "halves (FlashAttention-4 pairs head dims >= 128); use head dim 128",
                                 p.headdim));
  const std::uint32_t per = p.two_cta ? 2 : 1;  // a pair's second CTA past an odd tile count
  attention::validate_shape({p.batch, p.heads, p.kv_heads, p.seqlen, p.seqlens},
                            (p.seqlen + per * kTile - 1) / (per * kTile) * per);
}

// FlashAttention-4's SingleTileScheduler: one CTA per (key tile, head, sequence), the key tile
// fastest; a causal tile sees the Q tiles from its own diagonal on. A pair takes two key tiles
// (the second past the sequence's end when it has an odd count, as FlashAttention-4 pads), both
// from the first one's diagonal.
std::vector<Unit> units_of(const Problem& pr) {
  std::vector<Unit> units;
  const std::uint32_t per = pr.p.two_cta ? 2 : 1;
  for (std::uint32_t b = 0; b < pr.lens.size(); ++b)
    for (std::uint32_t h = 0; h < pr.p.heads; ++h) {
      const std::uint32_t tiles = (pr.lens[b] + kTile - 1) / kTile;
      for (std::uint32_t n0 = 0; n0 < tiles; n0 += per)
        for (std::uint32_t c = 0; c < per; ++c) units.push_back({b, h, (n0 + c) * kTile, pr.p.causal ? n0 : 0, tiles});
    }
  return units;
}

}  // namespace

FmhaBwdResult run_fmha_bwd(const HardwareConfig& config, const SimOptions& options, const FmhaBwdParams& p,
                           bool check) {
  validate(config, p);
  const std::uint32_t kvh = p.kv_heads ? p.kv_heads : p.heads, d = p.headdim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const std::uint32_t block_keys = (p.two_cta ? 2 : 1) * kTile;
  const bool partials = p.dq_path == FmhaBwdParams::DqPath::Partials;
  const Problem pr{p, kvh, d, p.seqlens.empty() ? std::vector<std::uint32_t>(p.batch, p.seqlen) : p.seqlens,
                   static_cast<float>(scale * kLog2e), static_cast<float>(scale),
                   (p.seqlen + block_keys - 1) / block_keys};
  const Layout l = layout(config, d, pr.gqa(), p.two_cta);
  const std::vector<Unit> units = units_of(pr);

  Simulator sim(config, options);
  const std::uint32_t bh = p.batch * p.heads, bkv = p.batch * kvh;
  const std::uint64_t q_bytes = 2ull * d * p.seqlen * bh, kv_bytes = 2ull * d * p.seqlen * bkv;
  const BwdTensorAddrs a{sim.gmem().alloc(q_bytes), sim.gmem().alloc(kv_bytes), sim.gmem().alloc(kv_bytes),
                         sim.gmem().alloc(q_bytes), sim.gmem().alloc(q_bytes), sim.gmem().alloc(q_bytes),
                         sim.gmem().alloc(kv_bytes), sim.gmem().alloc(kv_bytes)};
  const std::uint32_t row_pitch = align_up(4 * p.seqlen, 16);
  const GmemAddr lse = sim.gmem().alloc(static_cast<std::uint64_t>(row_pitch) * bh),
                 lse_log2 = sim.gmem().alloc(static_cast<std::uint64_t>(row_pitch) * bh),
                 delta = sim.gmem().alloc(static_cast<std::uint64_t>(row_pitch) * bh),
                 dq_acc = sim.gmem().alloc(4ull * d * p.seqlen * bh * (partials ? pr.key_blocks : 1));
  const GmemAddr dk_acc = pr.gqa() ? sim.gmem().alloc(4ull * d * p.seqlen * bkv) : GmemAddr{},
                 dv_acc = pr.gqa() ? sim.gmem().alloc(4ull * d * p.seqlen * bkv) : GmemAddr{};
  auto tiles = [&](GmemAddr at, DataType t, std::uint32_t slabs, std::vector<std::uint32_t> box, Swizzle sw) {
    const std::uint64_t row = static_cast<std::uint64_t>(size_of(t)) * d;
    return TensorMap::tiled({.dtype = t, .address = at, .dims = {d, p.seqlen, slabs}, .strides = {row, row * p.seqlen},
                             .box = std::move(box), .swizzle = sw});
  };
  auto rows = [&](GmemAddr at) {
    return TensorMap::tiled({.dtype = DataType::F32, .address = at, .dims = {p.seqlen, bh}, .strides = {row_pitch},
                             .box = {kTile, 1}});
  };
  const std::vector<std::uint32_t> tile_box{kChunk, kTile, 1}, half_tile_box{kChunk, kTile / 2, 1},
      acc_box{kDqCols, kTile, 1}, reduce_box{kDqCols, 32, 1}, half_box{d / 2, 32, 1};
  const Maps maps{tiles(a.q, p.dtype, bh, tile_box, Swizzle::B128),
                  tiles(a.k, p.dtype, bkv, tile_box, Swizzle::B128),
                  tiles(a.v, p.dtype, bkv, tile_box, Swizzle::B128),
                  tiles(a.d_o, p.dtype, bh, tile_box, Swizzle::B128),
                  tiles(a.q, p.dtype, bh, half_tile_box, Swizzle::B128),
                  tiles(a.d_o, p.dtype, bh, half_tile_box, Swizzle::B128),
                  rows(lse_log2),
                  rows(delta),
                  tiles(dq_acc, DataType::F32, bh * (partials ? pr.key_blocks : 1), reduce_box, Swizzle::None),
                  pr.gqa() ? tiles(dk_acc, DataType::F32, bkv, half_box, Swizzle::None)
                           : tiles(a.dk, p.dtype, bkv, half_box, Swizzle::None),
                  pr.gqa() ? tiles(dv_acc, DataType::F32, bkv, half_box, Swizzle::None)
                           : tiles(a.dv, p.dtype, bkv, half_box, Swizzle::None)};
  const TensorMap o_map = tiles(a.o, p.dtype, bh, tile_box, Swizzle::B128), lse_map = rows(lse),
                  dq_acc_tiles = tiles(dq_acc, DataType::F32, bh * (partials ? pr.key_blocks : 1), acc_box,
                                       Swizzle::None);
  // With GQA: the fp32 sums of dK and dV as the pre-kernel zeroes them and the post-kernel reads
  // them (the main kernel adds into them with its own boxes); without, unused.
  std::optional<TensorMap> dk_acc_tiles, dv_acc_tiles;
  if (pr.gqa()) {
    dk_acc_tiles = tiles(dk_acc, DataType::F32, bkv, acc_box, Swizzle::None);
    dv_acc_tiles = tiles(dv_acc, DataType::F32, bkv, acc_box, Swizzle::None);
  }
  const AttentionShape shape{p.batch, p.heads, kvh, p.seqlen, pr.lens, d, d, p.causal};
  if (sim.gmem().holds_data()) {
    attention::fill_random(sim.gmem().bytes(a.q, q_bytes), p.dtype, 21, 2.0f);
    attention::fill_random(sim.gmem().bytes(a.k, kv_bytes), p.dtype, 22, 2.0f);
    attention::fill_random(sim.gmem().bytes(a.v, kv_bytes), p.dtype, 23, 1.0f);
    attention::fill_random(sim.gmem().bytes(a.d_o, q_bytes), p.dtype, 24, 1.0f);
    write_forward_outputs(sim, shape, p.dtype, a, lse, row_pitch);  // O and LSE as the forward writes them
  }

  FmhaBwdResult r;
  r.ctas = static_cast<std::uint32_t>(units.size());
  r.pre = run_bwd_preprocess(sim, {.o = &o_map, .d_o = &maps.d_o, .lse = &lse_map, .lse_log2 = &maps.lse_log2,
                                   .delta = &maps.delta, .dq_acc = partials ? nullptr : &dq_acc_tiles,
                                   .dk_acc = pr.gqa() ? &*dk_acc_tiles : nullptr, .dv_acc = pr.gqa() ? &*dv_acc_tiles : nullptr,
                                   .heads = p.heads, .kv_heads = kvh, .headdim = d, .seqlen = p.seqlen, .bh = bh});

  const CoreBlock p_code = bwd_p_block(kHalf, false, config), p_masked = bwd_p_block(kHalf, true, config),
                  ds_code = bwd_ds_block(kHalf, config), convert_code = bwd_convert_block(d / 2, config);
  // TMEM: S/P 0, dV 128, dP/dS 128 + d, dK 256 + d; dQ over dP (one CTA: d columns), or beside
  // dS in dP's upper half (a pair: Layout B folds its 64 rows x d into d / 2 columns).
  const std::uint32_t keys_m = p.two_cta ? 2 * kTile : kTile;  // S, dP, dV, dK: M over the pair
  const Kernel kernel{pr, units, maps, l, 0, kTile, kTile + d, 2 * kTile + d, kTile + d + (p.two_cta ? d / 2 : 0),
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype, .m = keys_m,
                                                                 .n = kTile}),
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype,
                                                                 .b_major = Major::MN, .m = keys_m, .n = d}),
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype,
                                                                 .a_major = Major::MN, .b_major = Major::MN, .m = kTile,
                                                                 .n = d}),
                      p_code, p_masked, ds_code, convert_code};
  r.main = sim.launch("fmha_bwd",
                      LaunchConfig{.grid_ctas = r.ctas, .block_threads = 512, .dynamic_smem_bytes = l.smem,
                                   .registers_per_thread = 128, .cluster = {p.two_cta ? 2u : 1u, 1, 1}},
                      [&kernel](Warp& w) { return kernel(w); });

  const std::uint32_t rows_q = p.seqlen;
  const TensorMap dq_out = tiles(a.dq, p.dtype, bh, {d, 32, 1}, Swizzle::None),
                  dk_out = tiles(a.dk, p.dtype, bkv, {d, 32, 1}, Swizzle::None),
                  dv_out = tiles(a.dv, p.dtype, bkv, {d, 32, 1}, Swizzle::None);
  std::vector<BwdConvertJob> jobs{{&dq_acc_tiles, &dq_out, pr.scale, bh, rows_q, d}};
  if (partials) {  // Q tile m adds the key blocks that see it: those of its sequence, up to its diagonal
    jobs[0].parts = pr.key_blocks;
    jobs[0].live = [&pr, block_keys](std::uint32_t slab, std::uint32_t m) {
      const std::uint32_t len = pr.lens[slab / pr.p.heads], blocks = (len + block_keys - 1) / block_keys;
      if (m * kTile >= len) return std::pair<std::uint32_t, std::uint32_t>{0, 0};
      return std::pair<std::uint32_t, std::uint32_t>{0, pr.p.causal ? std::min(blocks, m * kTile / block_keys + 1) : blocks};
    };
  }
  if (pr.gqa()) {
    jobs.push_back({&*dk_acc_tiles, &dk_out, 1.0f, bkv, rows_q, d});  // the main kernel scaled dK's terms
    jobs.push_back({&*dv_acc_tiles, &dv_out, 1.0f, bkv, rows_q, d});
  }
  r.post = run_bwd_convert(sim, jobs);
  r.cycles = r.pre.cycles + r.main.cycles + r.post.cycles;
  // dQ's fp32 bytes out of the main kernel: each reduce warp's rows of each Q tile its CTA walks
  // (a pair's CTA: its 64 of the 128), clipped at the padded length.
  for (std::uint32_t i = 0; i < units.size(); ++i) {
    const std::uint32_t rows = p.two_cta ? kTile / 2 : kTile, first = p.two_cta ? i % 2 * rows : 0;
    for (std::uint32_t mt = units[i].m_begin; mt < units[i].m_end; ++mt) {
      const std::uint32_t row0 = mt * kTile + first;
      r.dq_bytes += row0 < p.seqlen ? 4ull * d * std::min(rows, p.seqlen - row0) : 0;
    }
  }
  for (std::uint32_t len : pr.lens)
    r.flops += 2.5 * 4.0 * p.heads * len * static_cast<double>(len) * d * (p.causal ? 0.5 : 1.0);

  if (sim.gmem().holds_data()) {
    const auto bytes = sim.gmem().bytes(a.dq, q_bytes);
    std::uint64_t h = 0;
    for (std::size_t i = 0; i < bytes.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, &bytes[i], std::min<std::size_t>(8, bytes.size() - i));
      h = mix64(h ^ word);
    }
    r.dq_digest = h;
  }
  if (check && sim.gmem().holds_data()) check_fmha_bwd_against_reference(sim, shape, p.dtype, a, r);
  return r;
}

namespace {

KernelReport run_from_cli(const KernelRequest& req) {
  const KernelArgs& a = req.args;
  FmhaBwdParams p;
  const attention::Shape shape = attention::shape_from_cli(a);
  p.batch = shape.batch, p.heads = shape.heads, p.kv_heads = shape.kv_heads, p.seqlen = shape.seqlen;
  p.seqlens = shape.seqlens;
  p.headdim = static_cast<std::uint32_t>(a.integer("headdim", 1, 1024));
  const auto t = parse_data_type(a.text("dtype"));
  if (!t) throw InputError(fmt::format("--dtype: unknown type '{}'", a.text("dtype")));
  p.dtype = *t;
  p.causal = a.flag("causal");
  p.two_cta = a.integer("cta-group", 1, 2) == 2;
  if (const std::string& path = a.text("dq-path"); path == "partials")
    p.dq_path = FmhaBwdParams::DqPath::Partials;
  else if (path != "reduce")
    throw InputError(fmt::format("--dq-path: reduce or partials, got '{}'", path));
  const auto bug = parse_fmha_bwd_bug(a.text("bug"));
  if (!bug) throw InputError(fmt::format("--bug: none, ds-before-dp or dq-skips-tile, got '{}'", a.text("bug")));
  p.bug = *bug;
  const FmhaBwdResult r = run_fmha_bwd(req.config, req.options, p, req.check);
  KernelReport rep;
  rep.kernel = "fmha_bwd";
  rep.problem = fmt::format("dQ, dK, dV of softmax(Q K^T / sqrt(d)) V{}, batch {} x {} heads ({} K/V heads), seqlen {}{}, "
                            "head dim {}, {}; {} CTAs ({})",
                            p.causal ? " causal" : "", p.batch, p.heads, p.kv_heads ? p.kv_heads : p.heads, p.seqlen,
                            p.seqlens.empty() ? "" : fmt::format(" (lengths {})", a.text("seqlens")), p.headdim,
                            name_of(p.dtype), r.ctas,
                            p.two_cta ? "CTA pairs, each per 256 keys and head" : "one per 128-key tile and head");
  rep.run = r.main;  // the statistics, trace and power: the main kernel's (its figures add the others' cycles)
  rep.checked = r.checked;
  rep.check_passed = r.matches;
  rep.check_detail = r.checked ? r.detail : "not checked";
  const double seconds = static_cast<double>(r.cycles) / (req.config.clock_ghz * 1e9);
  const auto& pipes = r.main.pipes;
  rep.figures = {{"tflops", seconds > 0 ? r.flops / seconds / 1e12 : 0.0},
                 {"flops", r.flops},
                 {"total_cycles", r.cycles},
                 {"pre_cycles", r.pre.cycles},
                 {"main_cycles", r.main.cycles},
                 {"post_cycles", r.post.cycles},
                 {"tensor_busy_fraction", r.main.mma_busy_fraction()},
                 {"mufu_busy_fraction", CorePipeStats::busy_fraction(pipes.mufu_busy_cycles, r.main.context())},
                 {"fma_busy_fraction", CorePipeStats::busy_fraction(pipes.fma_busy_cycles, r.main.context())},
                 {"issue_busy_fraction", CorePipeStats::busy_fraction(pipes.issue_cycles, r.main.context())},
                 {"l2_reduce_bytes", r.main.memory.l2_reduce_bytes},
                 {"dq_bytes", r.dq_bytes},
                 {"ctas", r.ctas}};
  return rep;
}

}  // namespace

KernelInfo fmha_bwd_kernel_info() {
  return KernelInfo{"fmha_bwd",
                    "Attention backward (dQ, dK, dV) in the structure of FlashAttention-4's SM100 backward: a pre-kernel "
                    "(D, LSE log2), one CTA per key tile (or a CTA pair per 256 keys, --cta-group 2) with dQ-reduce, "
                    "compute, MMA and load warps (S, dP, dV, dK, dQ in TMEM; dQ added into fp32 by TMA reductions, or "
                    "stored as partials), a post-kernel converting dQ; the run is the main kernel's, total_cycles all three",
                    attention::shape_params({{"headdim", "head dim of Q, K, V: 64 or 128", "128"},
                     {"dtype", data_type_names({DataType::BF16, DataType::F16}), "bf16"},
                     {"causal", "1: causal mask (key tiles skip the Q tiles before their diagonal); the flag alone: 1",
                      "0", true},
                     {"cta-group", "1: one CTA per 128 keys; 2: CTA pairs per 256 keys with cta_group::2 MMAs "
                                   "(FlashAttention-4's 2-CTA form; head dim 128)", "1"},
                     {"dq-path", "reduce (TMA reduce-add of each tile's dQ into fp32, atomic in the L2) or partials "
                                 "(each stored, summed in key order by the post-kernel: deterministic)", "reduce"},
                     {"bug", "a deliberate bug: none, ds-before-dp, dq-skips-tile", "none"}}),
                    &run_from_cli};
}

}  // namespace bwsim
