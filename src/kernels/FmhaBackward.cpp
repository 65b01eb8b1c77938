#include "bwsim/kernels/FmhaBackward.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernels/AttentionBackwardCode.hpp"
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
constexpr std::uint32_t kDqCols = 32;                  // dQ columns per TMA reduction (16 KiB of fp32)
constexpr float kLog2e = 1.4426950408889634f;
constexpr std::int32_t i32(std::uint64_t v) { return static_cast<std::int32_t>(v); }

// Warp roles (FlashAttention-4's SM100 backward).
enum class Role { DqReduce, Compute, Mma, Load, Empty };
Role role_of(std::uint32_t warp) {
  if (warp < 4) return Role::DqReduce;
  if (warp < 12) return Role::Compute;
  if (warp == 12) return Role::Mma;
  if (warp == 13) return Role::Load;
  return Role::Empty;
}

// mbarriers; Q and the row statistics (LSE log2, D) have two stages, the rest one.
enum Barrier : std::uint32_t {
  KvFull, QFull, QEmpty = QFull + 2, StatsFull = QEmpty + 2, StatsEmpty = StatsFull + 2, DoFull = StatsEmpty + 2,
  DoEmpty, SFull, PFull, DpFull, DsFull, DsEmpty, DqFull, DqEmpty, DkvFull, kBarriers
};
constexpr std::uint32_t kComputeWarps = 8, kReduceWarps = 4;
// Named barriers (bar.sync ids): the two compute warpgroups; the dQ reduce warps.
constexpr std::uint32_t kComputeSync = 1, kReduceSync = 2;

// A CTA's work: one 128-key tile of one query head and the Q tiles that see it.
struct Unit {
  std::uint32_t b = 0, h = 0, n = 0;
  std::uint32_t m_begin = 0, m_end = 0;
};

// SMEM: barriers and the TMEM address in the first KiB; the statistics stages (LSE log2 and D,
// 128 floats each) in the next 2 KiB; then K, V, the two Q stages, dO, dS (two 64-query chunks,
// MN-major: the A operand of dQ = dS K) and two dQ staging boxes (128 rows x 32 fp32). After the
// last MMA, each compute warp stages its dK and dV rows in its own slot from Q's start.
struct Layout {
  std::uint32_t chunks = 2;
  std::uint32_t tmem_slot = 8 * kBarriers, stats = 1024, k = 3072, v = 0, q = 0, d_o = 0, ds = 0, dq = 0, smem = 0;
  std::uint32_t slot_bytes = 0;  // per compute warp, for dK and dV
  std::uint32_t tile_bytes() const { return chunks * kChunkBytes; }
  SmemAddr q_stage(std::uint32_t s) const { return SmemAddr{q + s * tile_bytes()}; }
  SmemAddr lse(std::uint32_t s) const { return SmemAddr{stats + s * 1024}; }
  SmemAddr delta(std::uint32_t s) const { return SmemAddr{stats + s * 1024 + 512}; }
  SmemAddr dq_box(std::uint32_t slot) const { return SmemAddr{dq + slot * kChunkBytes}; }
  static MBarrierRef bar(std::uint32_t b, std::uint32_t stage = 0) { return MBarrierRef{8 * (b + stage)}; }
};

Layout layout(const HardwareConfig& config, std::uint32_t d, bool gqa) {
  Layout l;
  l.chunks = d / kChunk;
  l.v = l.k + l.tile_bytes();
  l.q = l.v + l.tile_bytes();
  l.d_o = l.q + 2 * l.tile_bytes();
  l.ds = l.d_o + l.tile_bytes();
  l.dq = l.ds + 2 * kChunkBytes;
  l.smem = l.dq + 2 * kChunkBytes;
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
  bool gqa() const { return kv_heads != p.heads; }
};

struct Maps {
  TensorMap q, k, v, d_o;          // 16-bit, 64 x 128-row boxes, 128-byte swizzle
  TensorMap lse_log2, delta;       // fp32 rows of 128
  TensorMap dq_acc;                // fp32, 32 x 128-row boxes
  TensorMap dk_out, dv_out;        // d/2 x 32-row boxes: 16-bit (MHA) or the fp32 sums (GQA)
};

// A warp's registers for tcgen05.ld / st: its own in functional mode; in timing mode no data
// moves, so every warp shares one buffer nothing writes.
std::span<std::uint32_t> registers(const Warp& w, std::vector<std::uint32_t>& own, std::size_t n) {
  static std::vector<std::uint32_t> untouched(32 * 256);
  if (!w.functional()) return std::span(untouched).first(n);
  own.resize(n);
  return own;
}

struct Kernel {
  const Problem& pr;
  const std::vector<Unit>& units;
  const Maps& m;
  Layout l;
  std::uint32_t col_s = 0, col_dv = 0, col_dp = 0, col_dk = 0;  // TMEM columns
  InstrDescriptor qk_desc, ts_desc, dq_desc;
  const CoreBlock &p_code, &p_masked_code, &ds_code, &convert_code;

  std::uint32_t bh(const Unit& u) const { return u.b * pr.p.heads + u.h; }
  std::uint32_t kv_bh(const Unit& u) const { return u.b * pr.kv_heads + u.h / (pr.p.heads / pr.kv_heads); }
  // Whether Q tile `mt` of the unit needs a mask: on the causal diagonal, or past the end.
  bool masked(const Unit& u, std::uint32_t mt) const {
    const std::uint32_t len = pr.lens[u.b];
    return (pr.p.causal && mt == u.n) || (mt + 1) * kTile > len || (u.n + 1) * kTile > len;
  }

  Task operator()(Warp& w) const {
    const Unit& u = units[w.cta_idx()];
    const Role role = role_of(w.warp_idx());
    if (role == Role::Mma) {
      static constexpr const char* kNames[kBarriers] = {
          "kv.full", "q.full[0]", "q.full[1]", "q.empty[0]", "q.empty[1]", "stats.full[0]", "stats.full[1]",
          "stats.empty[0]", "stats.empty[1]", "do.full", "do.empty", "s.full", "p.full", "dp.full", "ds.full",
          "ds.empty", "dq.full", "dq.empty", "dkv.full"};
      for (std::uint32_t b = 0; b < kBarriers; ++b) {
        const bool by_compute = b == StatsEmpty || b == StatsEmpty + 1 || b == PFull || b == DsFull;
        w.mbarrier_init(Layout::bar(b), by_compute ? kComputeWarps : b == DqEmpty ? kReduceWarps : 1, kNames[b]);
      }
      co_await w.tcgen05_alloc(SmemAddr{l.tmem_slot}, 512);
      w.tcgen05_relinquish_alloc_permit();
    }
    co_await w.syncthreads();
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
      case Role::Mma: co_await mma(w, u, tmem); break;
      case Role::Compute: co_await compute(w, u, tmem); break;
      case Role::DqReduce: co_await reduce_dq(w, u, tmem); break;
      case Role::Empty: w.set_role("Empty"); break;
    }
    co_await w.syncthreads();
    if (role == Role::Mma) w.tcgen05_dealloc(tmem, 512);
  }

  // K and V once; per Q tile j: Q_j and its statistics (two stages), dO_j (one).
  Task load(Warp& w, const Unit& u) const {
    w.set_role("Load");
    const std::uint32_t bytes = l.tile_bytes();
    w.mbarrier_arrive_expect_tx(Layout::bar(KvFull), 2 * bytes);
    for (std::uint32_t c = 0; c < l.chunks; ++c)
      for (const bool is_k : {true, false})
        w.tma_load(is_k ? m.k : m.v, SmemAddr{(is_k ? l.k : l.v) + c * kChunkBytes}, Layout::bar(KvFull),
                   {i32(c * kChunk), i32(u.n * kTile), i32(kv_bh(u))});
    for (std::uint32_t j = 0, mt = u.m_begin; mt < u.m_end; ++j, ++mt) {
      const std::uint32_t s = j % 2;
      if (j >= 2) co_await w.mbarrier_wait(Layout::bar(QEmpty, s), (j / 2 - 1) & 1u);
      w.mbarrier_arrive_expect_tx(Layout::bar(QFull, s), bytes);
      for (std::uint32_t c = 0; c < l.chunks; ++c)
        w.tma_load(m.q, SmemAddr{l.q_stage(s).offset + c * kChunkBytes}, Layout::bar(QFull, s),
                   {i32(c * kChunk), i32(mt * kTile), i32(bh(u))});
      if (j >= 2) co_await w.mbarrier_wait(Layout::bar(StatsEmpty, s), (j / 2 - 1) & 1u);
      w.mbarrier_arrive_expect_tx(Layout::bar(StatsFull, s), 2 * kTile * 4);
      w.tma_load(m.lse_log2, l.lse(s), Layout::bar(StatsFull, s), {i32(mt * kTile), i32(bh(u))});
      w.tma_load(m.delta, l.delta(s), Layout::bar(StatsFull, s), {i32(mt * kTile), i32(bh(u))});
      if (j >= 1) co_await w.mbarrier_wait(Layout::bar(DoEmpty), (j - 1) & 1u);
      w.mbarrier_arrive_expect_tx(Layout::bar(DoFull), bytes);
      for (std::uint32_t c = 0; c < l.chunks; ++c)
        w.tma_load(m.d_o, SmemAddr{l.d_o + c * kChunkBytes}, Layout::bar(DoFull),
                   {i32(c * kChunk), i32(mt * kTile), i32(bh(u))});
    }
  }

  // S^T = K Q^T or dP^T = V dO^T (M = keys, N = queries, K = the head dim), both K-major.
  void mma_qk(Warp& w, TmemAddr d, std::uint32_t a, SmemAddr b) const {
    for (std::uint32_t kb = 0; kb < pr.d / 16; ++kb) {
      const std::uint32_t c = kb / 4, within = (kb % 4) * 32;
      w.tcgen05_mma(MmaKind::F16, d, k_major(SmemAddr{a + c * kChunkBytes}, within),
                    k_major(SmemAddr{b.offset + c * kChunkBytes}, within), qk_desc, kb > 0);
    }
  }
  // dV += P^T dO or dK += dS^T Q: A (keys x queries, 16-bit pairs) from TMEM column `a`, B the
  // tile MN-major (N = the head dim, K = queries).
  void mma_ts(Warp& w, TmemAddr d, TmemAddr a, SmemAddr b, bool accumulate) const {
    for (std::uint32_t kb = 0; kb < kTile / 16; ++kb)
      w.tcgen05_mma(MmaKind::F16, d, a + kb * 8, mn_major(b, kb * 16), ts_desc, accumulate || kb > 0);
  }

  // FlashAttention-4's 1-CTA order: S_0, dP_0, dV_0; per tile j: S_{j+1}, dK_j, dQ_j, dP_{j+1},
  // dV_{j+1}. dQ_j and dP_{j+1} write dS_j's columns: dK_j reads them first (the pipe runs in
  // order), and dP_{j+1} waits until the reduce warps have read dQ_j.
  Task mma(Warp& w, const Unit& u, TmemAddr tmem) const {
    w.set_role("MMA");
    const std::uint32_t n = u.m_end - u.m_begin;
    auto s_mma = [&](std::uint32_t j) -> Task {
      co_await w.mbarrier_wait(Layout::bar(QFull, j % 2), (j / 2) & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_qk(w, tmem + col_s, l.k, l.q_stage(j % 2));
      w.tcgen05_commit(Layout::bar(SFull));
    };
    auto dp_dv = [&](std::uint32_t j) -> Task {
      co_await w.mbarrier_wait(Layout::bar(DoFull), j & 1u);
      if (j > 0) co_await w.mbarrier_wait(Layout::bar(DqEmpty), (j - 1) & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_qk(w, tmem + col_dp, l.v, SmemAddr{l.d_o});
      w.tcgen05_commit(Layout::bar(DpFull));
      co_await w.mbarrier_wait(Layout::bar(PFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_ts(w, tmem + col_dv, tmem + col_s, SmemAddr{l.d_o}, j > 0);
      w.tcgen05_commit(Layout::bar(DoEmpty));
    };
    co_await w.mbarrier_wait(Layout::bar(KvFull), 0);
    co_await s_mma(0);
    co_await dp_dv(0);
    for (std::uint32_t j = 0; j < n; ++j) {
      if (j + 1 < n) co_await s_mma(j + 1);
      co_await w.mbarrier_wait(Layout::bar(DsFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      mma_ts(w, tmem + col_dk, tmem + col_dp, l.q_stage(j % 2), j > 0);
      w.tcgen05_commit(Layout::bar(QEmpty, j % 2));
      for (std::uint32_t kb = 0; kb < kTile / 16; ++kb)  // dQ_j = dS_j K: A and B MN-major from SMEM
        w.tcgen05_mma(MmaKind::F16, tmem + col_dp, mn_major(SmemAddr{l.ds}, kb * 16), mn_major(SmemAddr{l.k}, kb * 16),
                      dq_desc, kb > 0);
      w.tcgen05_commit(Layout::bar(DqFull));
      w.tcgen05_commit(Layout::bar(DsEmpty));
      if (j + 1 < n) co_await dp_dv(j + 1);
    }
    w.tcgen05_commit(Layout::bar(DkvFull));
  }

  // Warp 4 + 4g + q: keys 32q.. of the tile (its TMEM lane quadrant), queries 64g.. of each Q
  // tile. P and dS overwrite S and dP in TMEM: each warpgroup writes columns the other reads, so
  // both finish reading first (the 256-thread named barrier).
  Task compute(Warp& w, const Unit& u, TmemAddr tmem) const {
    const std::uint32_t q = w.warp_idx() % 4, g = (w.warp_idx() - 4) / 4;
    w.set_role(fmt::format("Compute{} w{}", g, q));
    std::vector<std::uint32_t> s_own, p_own, dp_own, ds_own;
    const std::span<std::uint32_t> s = registers(w, s_own, 32 * kHalf), pbits = registers(w, p_own, 32 * kHalf / 2),
                                   dp = registers(w, dp_own, 32 * kHalf), dsbits = registers(w, ds_own, 32 * kHalf / 2);
    std::vector<float> p(32 * kHalf), lse(kHalf), delta(kHalf);
    std::vector<std::byte> ds_rows(32 * 128);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    const bool ds_before_dp = pr.p.bug == FmhaBwdBug::DsBeforeDp;
    for (std::uint32_t j = 0, mt = u.m_begin; mt < u.m_end; ++j, ++mt) {
      const std::uint32_t st = j % 2;
      co_await w.mbarrier_wait(Layout::bar(StatsFull, st), (j / 2) & 1u);
      w.ld_shared(l.lse(st) + 4 * kHalf * g, std::as_writable_bytes(std::span(lse)));
      w.ld_shared(l.delta(st) + 4 * kHalf * g, std::as_writable_bytes(std::span(delta)));
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
      w.mbarrier_arrive(Layout::bar(PFull));
      // The mutant waits for the previous tile's dP (a phase long complete) instead of this one's.
      if (!ds_before_dp || j == 0) co_await w.mbarrier_wait(Layout::bar(DpFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      w.tcgen05_ld(lanes + (col_dp + kHalf * g), TmemShape::S32x32b, kHalf, dp);
      co_await w.tcgen05_wait_ld();
      if (w.functional()) compute_ds(dp, delta, p, dsbits, ds_rows, q);
      co_await w.run(ds_code);
      w.mbarrier_arrive(Layout::bar(StatsEmpty, st));
      co_await w.bar_sync(kComputeSync, 32 * kComputeWarps);  // every warp's dP read
      w.tcgen05_st(lanes + (col_dp + kHalf / 2 * g), TmemShape::S32x32b, kHalf / 2, dsbits);
      if (j > 0) co_await w.mbarrier_wait(Layout::bar(DsEmpty), (j - 1) & 1u);  // dQ_{j-1} read sdS
      w.st_shared(SmemAddr{l.ds + g * kChunkBytes + q * 32 * 128}, ds_rows);
      w.fence_proxy_async();
      co_await w.tcgen05_wait_st();
      w.tcgen05_fence_before_thread_sync();
      w.mbarrier_arrive(Layout::bar(DsFull));
    }
    co_await epilogue(w, u, tmem, q, g);
  }

  // P = exp2(s * scale_log2 - lse_log2) per (key lane, query column); 0 where masked.
  void compute_p(const Unit& u, std::uint32_t mt, std::uint32_t q, std::uint32_t g, std::span<const std::uint32_t> s,
                 const std::vector<float>& lse, std::vector<float>& p, std::span<std::uint32_t> pbits) const {
    const std::uint32_t len = pr.lens[u.b];
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      const std::uint32_t key = u.n * kTile + 32 * q + lane;
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
                  std::span<std::uint32_t> dsbits, std::vector<std::byte>& rows, std::uint32_t q) const {
    std::vector<float> ds(kHalf);
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
    const std::span<std::uint32_t> regs = registers(w, own, 32 * cols);
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
      w.st_shared(slot, rows);
      w.fence_proxy_async();
      const TensorMap& map = dk ? m.dk_out : m.dv_out;
      const TensorCoords at{i32(cols * g), i32(u.n * kTile + 32 * q), i32(kv_bh(u))};
      if (pr.gqa())
        w.tma_reduce_add(map, slot, at);
      else
        w.tma_store(map, slot, at);
    }
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
  }

  // Per Q tile: dQ_j from TMEM (this warp's 32 query rows), released at once; then 32 columns at
  // a time through two 16 KiB SMEM boxes, each added to dQaccum by one TMA reduction of warp 0.
  Task reduce_dq(Warp& w, const Unit& u, TmemAddr tmem) const {
    const std::uint32_t q = w.warp_idx();
    w.set_role(fmt::format("dQ reduce w{}", q));
    std::vector<std::uint32_t> own;
    const std::span<std::uint32_t> regs = registers(w, own, 32 * pr.d);
    std::vector<std::byte> rows(32 * kDqCols * 4);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    std::uint32_t boxes = 0;
    for (std::uint32_t j = 0, mt = u.m_begin; mt < u.m_end; ++j, ++mt) {
      co_await w.mbarrier_wait(Layout::bar(DqFull), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      w.tcgen05_ld(lanes + col_dp, TmemShape::S32x32b, pr.d, regs);
      co_await w.tcgen05_wait_ld();
      w.tcgen05_fence_before_thread_sync();
      w.mbarrier_arrive(Layout::bar(DqEmpty));
      if (pr.p.bug == FmhaBwdBug::DqSkipsTile && j == 1) continue;
      for (std::uint32_t c = 0; c < pr.d / kDqCols; ++c, ++boxes) {
        const SmemAddr box = l.dq_box(boxes % 2);
        if (q == 0 && boxes >= 2) co_await w.bulk_wait_group_read(1);  // the box two back has been read
        co_await w.bar_sync(kReduceSync, 32 * kReduceWarps);
        if (w.functional())
          for (std::uint32_t r = 0; r < 32; ++r)
            std::memcpy(&rows[r * kDqCols * 4], &regs[r * pr.d + c * kDqCols], kDqCols * 4);
        w.st_shared(box + q * 32 * kDqCols * 4, rows);
        w.fence_proxy_async();
        co_await w.bar_sync(kReduceSync, 32 * kReduceWarps);
        if (q == 0) {
          w.tma_reduce_add(m.dq_acc, box, {i32(c * kDqCols), i32(mt * kTile), i32(bh(u))});
          w.bulk_commit_group();
        }
      }
    }
    if (q == 0) co_await w.bulk_wait_group(0);
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
  if (p.batch == 0 || p.heads == 0) throw InputError("--batch and --heads must be at least 1");
  if (p.seqlen == 0) throw InputError("--seqlen 0: a sequence needs at least one token");
  if (!p.seqlens.empty() && p.seqlens.size() != p.batch)
    throw InputError(fmt::format("{} sequence lengths for a batch of {}", p.seqlens.size(), p.batch));
  for (std::uint32_t len : p.seqlens)
    if (len == 0 || len > p.seqlen)
      throw InputError(fmt::format("--seqlens: a length of {}; each must be in 1..{} (the padded length)", len, p.seqlen));
  const std::uint32_t kvh = p.kv_heads ? p.kv_heads : p.heads;
  if (p.heads % kvh != 0)
    throw InputError(fmt::format("--kv-heads {}: the {} query heads must split evenly over the K/V heads", kvh, p.heads));
  const std::uint64_t ctas = static_cast<std::uint64_t>(p.batch) * p.heads * ((p.seqlen + kTile - 1) / kTile);
  if (ctas >= (1ull << 31))
    throw InputError(fmt::format("batch {} x {} heads x seqlen {}: {} CTAs, more than a grid can have", p.batch, p.heads,
                                 p.seqlen, ctas));
}

// FlashAttention-4's SingleTileScheduler: one CTA per (key tile, head, sequence), the key tile
// fastest; a causal tile sees the Q tiles from its own diagonal on.
std::vector<Unit> units_of(const Problem& pr) {
  std::vector<Unit> units;
  for (std::uint32_t b = 0; b < pr.lens.size(); ++b)
    for (std::uint32_t h = 0; h < pr.p.heads; ++h) {
      const std::uint32_t tiles = (pr.lens[b] + kTile - 1) / kTile;
      for (std::uint32_t n = 0; n < tiles; ++n) units.push_back({b, h, n, pr.p.causal ? n : 0, tiles});
    }
  return units;
}

// Random inputs in [-range, range), fp32-rounded to the element type.
void fill(std::span<std::byte> bytes, DataType t, std::uint32_t seed, float range) {
  std::uint32_t x = seed;
  for (std::size_t i = 0; i < bytes.size() / 2; ++i) {
    x = x * 1664525u + 1013904223u;
    store_from_float(t, (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * 2 * range, &bytes[2 * i]);
  }
}

}  // namespace

FmhaBwdResult run_fmha_bwd(const HardwareConfig& config, const SimOptions& options, const FmhaBwdParams& p,
                           bool check) {
  validate(config, p);
  const std::uint32_t kvh = p.kv_heads ? p.kv_heads : p.heads, d = p.headdim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const Problem pr{p, kvh, d, p.seqlens.empty() ? std::vector<std::uint32_t>(p.batch, p.seqlen) : p.seqlens,
                   static_cast<float>(scale * 1.4426950408889634), static_cast<float>(scale)};
  const Layout l = layout(config, d, pr.gqa());
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
                 dq_acc = sim.gmem().alloc(4ull * d * p.seqlen * bh);
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
  const std::vector<std::uint32_t> tile_box{kChunk, kTile, 1}, acc_box{kDqCols, kTile, 1}, half_box{d / 2, 32, 1};
  const Maps maps{tiles(a.q, p.dtype, bh, tile_box, Swizzle::B128),
                  tiles(a.k, p.dtype, bkv, tile_box, Swizzle::B128),
                  tiles(a.v, p.dtype, bkv, tile_box, Swizzle::B128),
                  tiles(a.d_o, p.dtype, bh, tile_box, Swizzle::B128),
                  rows(lse_log2),
                  rows(delta),
                  tiles(dq_acc, DataType::F32, bh, acc_box, Swizzle::None),
                  pr.gqa() ? tiles(dk_acc, DataType::F32, bkv, half_box, Swizzle::None)
                           : tiles(a.dk, p.dtype, bkv, half_box, Swizzle::None),
                  pr.gqa() ? tiles(dv_acc, DataType::F32, bkv, half_box, Swizzle::None)
                           : tiles(a.dv, p.dtype, bkv, half_box, Swizzle::None)};
  const TensorMap o_map = tiles(a.o, p.dtype, bh, tile_box, Swizzle::B128), lse_map = rows(lse);
  const TensorMap dk_zero = pr.gqa() ? tiles(dk_acc, DataType::F32, bkv, acc_box, Swizzle::None) : o_map,
                  dv_zero = pr.gqa() ? tiles(dv_acc, DataType::F32, bkv, acc_box, Swizzle::None) : o_map;
  const AttentionShape shape{p.batch, p.heads, kvh, p.seqlen, pr.lens, d, d, p.causal};
  if (sim.gmem().holds_data()) {
    fill(sim.gmem().bytes(a.q, q_bytes), p.dtype, 21, 2.0f);
    fill(sim.gmem().bytes(a.k, kv_bytes), p.dtype, 22, 2.0f);
    fill(sim.gmem().bytes(a.v, kv_bytes), p.dtype, 23, 1.0f);
    fill(sim.gmem().bytes(a.d_o, q_bytes), p.dtype, 24, 1.0f);
    write_forward_outputs(sim, shape, p.dtype, a, lse, row_pitch);  // O and LSE as the forward writes them
  }

  FmhaBwdResult r;
  r.ctas = static_cast<std::uint32_t>(units.size());
  r.pre = run_bwd_preprocess(sim, {.o = &o_map, .d_o = &maps.d_o, .lse = &lse_map, .lse_log2 = &maps.lse_log2,
                                   .delta = &maps.delta, .dq_acc = &maps.dq_acc,
                                   .dk_acc = pr.gqa() ? &dk_zero : nullptr, .dv_acc = pr.gqa() ? &dv_zero : nullptr,
                                   .heads = p.heads, .kv_heads = kvh, .headdim = d, .seqlen = p.seqlen, .bh = bh});

  const CoreBlock p_code = bwd_p_block(kHalf, false, config), p_masked = bwd_p_block(kHalf, true, config),
                  ds_code = bwd_ds_block(kHalf, config), convert_code = bwd_convert_block(d / 2, config);
  const Kernel kernel{pr, units, maps, l, 0, kTile, kTile + d, 2 * kTile + d,
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype, .m = kTile,
                                                                 .n = kTile}),
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype,
                                                                 .b_major = Major::MN, .m = kTile, .n = d}),
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype,
                                                                 .a_major = Major::MN, .b_major = Major::MN, .m = kTile,
                                                                 .n = d}),
                      p_code, p_masked, ds_code, convert_code};
  r.main = sim.launch("fmha_bwd",
                      LaunchConfig{.grid_ctas = r.ctas, .block_threads = 512, .dynamic_smem_bytes = l.smem,
                                   .registers_per_thread = 128},
                      [&kernel](Warp& w) { return kernel(w); });

  const std::uint32_t rows_q = p.seqlen;
  const TensorMap dq_out = tiles(a.dq, p.dtype, bh, {d, 32, 1}, Swizzle::None),
                  dk_out = tiles(a.dk, p.dtype, bkv, {d, 32, 1}, Swizzle::None),
                  dv_out = tiles(a.dv, p.dtype, bkv, {d, 32, 1}, Swizzle::None);
  std::vector<BwdConvertJob> jobs{{&maps.dq_acc, &dq_out, pr.scale, bh, rows_q, d}};
  if (pr.gqa()) {
    jobs.push_back({&dk_zero, &dk_out, 1.0f, bkv, rows_q, d});  // the main kernel scaled dK's terms
    jobs.push_back({&dv_zero, &dv_out, 1.0f, bkv, rows_q, d});
  }
  r.post = run_bwd_convert(sim, jobs);
  r.cycles = r.pre.cycles + r.main.cycles + r.post.cycles;
  for (std::uint32_t len : pr.lens)
    r.flops += 2.5 * 4.0 * p.heads * len * static_cast<double>(len) * d * (p.causal ? 0.5 : 1.0);

  if (check && sim.gmem().holds_data()) check_fmha_bwd_against_reference(sim, shape, p.dtype, a, r);
  return r;
}

namespace {

KernelReport run_from_cli(const KernelRequest& req) {
  const KernelArgs& a = req.args;
  FmhaBwdParams p;
  p.batch = static_cast<std::uint32_t>(a.integer("batch", 0, 1u << 16));
  p.heads = static_cast<std::uint32_t>(a.integer("heads", 0, 1024));
  p.kv_heads = static_cast<std::uint32_t>(a.integer("kv-heads", 0, 1024));
  p.seqlen = static_cast<std::uint32_t>(a.integer("seqlen", 0, 1u << 20));
  p.headdim = static_cast<std::uint32_t>(a.integer("headdim", 1, 1024));
  const auto t = parse_data_type(a.text("dtype"));
  if (!t) throw InputError(fmt::format("--dtype: unknown type '{}'", a.text("dtype")));
  p.dtype = *t;
  p.causal = a.flag("causal");
  if (!a.text("seqlens").empty()) {
    const std::string& list = a.text("seqlens");
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      p.seqlens.push_back(static_cast<std::uint32_t>(
          parse_integer(list.substr(at, comma - at), "each length of --seqlens (e.g. 100,700,1000)", 1, 1u << 20)));
      at = comma + 1;
    }
    p.batch = static_cast<std::uint32_t>(p.seqlens.size());
    p.seqlen = *std::max_element(p.seqlens.begin(), p.seqlens.end());
  }
  const auto bug = parse_fmha_bwd_bug(a.text("bug"));
  if (!bug) throw InputError(fmt::format("--bug: none, ds-before-dp or dq-skips-tile, got '{}'", a.text("bug")));
  p.bug = *bug;
  const FmhaBwdResult r = run_fmha_bwd(req.config, req.options, p, req.check);
  KernelReport rep;
  rep.kernel = "fmha_bwd";
  rep.problem = fmt::format("dQ, dK, dV of softmax(Q K^T / sqrt(d)) V{}, batch {} x {} heads ({} K/V heads), seqlen {}{}, "
                            "head dim {}, {}; {} CTAs (one per 128-key tile and head)",
                            p.causal ? " causal" : "", p.batch, p.heads, p.kv_heads ? p.kv_heads : p.heads, p.seqlen,
                            p.seqlens.empty() ? "" : fmt::format(" (lengths {})", a.text("seqlens")), p.headdim,
                            name_of(p.dtype), r.ctas);
  rep.run = r.main;
  rep.run.cycles = r.cycles;  // the three launches one after another
  rep.checked = r.checked;
  rep.check_passed = r.matches;
  rep.check_detail = r.checked ? r.detail : "not checked";
  const double seconds = static_cast<double>(r.cycles) / (req.config.clock_ghz * 1e9);
  const auto& pipes = r.main.pipes;
  rep.figures = {{"tflops", seconds > 0 ? r.flops / seconds / 1e12 : 0.0},
                 {"flops", r.flops},
                 {"pre_cycles", r.pre.cycles},
                 {"main_cycles", r.main.cycles},
                 {"post_cycles", r.post.cycles},
                 {"tensor_busy_fraction", r.main.mma_busy_fraction()},
                 {"mufu_busy_fraction", CorePipeStats::busy_fraction(pipes.mufu_busy_cycles, r.main.context())},
                 {"fma_busy_fraction", CorePipeStats::busy_fraction(pipes.fma_busy_cycles, r.main.context())},
                 {"issue_busy_fraction", CorePipeStats::busy_fraction(pipes.issue_cycles, r.main.context())},
                 {"l2_reduce_bytes", r.main.memory.l2_reduce_bytes},
                 {"ctas", r.ctas}};
  return rep;
}

}  // namespace

KernelInfo fmha_bwd_kernel_info() {
  return KernelInfo{"fmha_bwd",
                    "Attention backward (dQ, dK, dV) in the structure of FlashAttention-4's SM100 backward: a pre-kernel "
                    "(D, LSE log2), one CTA per key tile with dQ-reduce, compute, MMA and load warps (S, dP, dV, dK, dQ "
                    "in TMEM; dQ added into fp32 by TMA reductions), a post-kernel converting dQ",
                    {{"batch", "sequences", "2"},
                     {"heads", "query heads", "4"},
                     {"kv-heads", "K/V heads (GQA); 0: as many as query heads", "0"},
                     {"seqlen", "tokens per sequence (queries and keys)", "1000"},
                     {"seqlens", "variable lengths, one per sequence (sets the batch), e.g. 100,700,1000", ""},
                     {"headdim", "head dim of Q, K, V: 64 or 128", "128"},
                     {"dtype", data_type_names({DataType::BF16, DataType::F16}), "bf16"},
                     {"causal", "1: causal mask (key tiles skip the Q tiles before their diagonal); the flag alone: 1",
                      "0", true},
                     {"bug", "a deliberate bug: none, ds-before-dp, dq-skips-tile", "none"}},
                    &run_from_cli};
}

}  // namespace bwsim
