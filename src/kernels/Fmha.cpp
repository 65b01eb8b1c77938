#include "bwsim/kernels/Fmha.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/numeric/Exp2Poly.hpp"
#include "bwsim/kernel/Pipeline.hpp"
#include "bwsim/kernels/AttentionCommon.hpp"
#include "bwsim/kernels/AttentionOperands.hpp"
#include "bwsim/kernels/FmhaReference.hpp"
#include "bwsim/kernels/FmhaSchedule.hpp"
#include "bwsim/kernels/RowMaxModel.hpp"
#include "bwsim/kernels/SoftmaxCode.hpp"

namespace bwsim {

FmhaAlgorithm FmhaAlgorithm::fa4(std::uint32_t headdim, bool causal) {
  FmhaAlgorithm a;
  if (headdim <= 128) a.exp2_emu_freq = 16;       // _TUNING_CONFIG (1-CTA, causal) and the default
  else if (causal) a.exp2_emu_freq = 32;          // (False, True, 192): freq 32
  a.exp2_emu_res = 4;
  a.exp2_emu_start = 1;
  a.rescale_threshold = 8.0;                      // 16-bit inputs
  a.persistent = !causal;                         // is_static_persistent: not causal (nor local, varlen)
  a.lpt = causal;                                 // SingleTileLPTScheduler for causal
  a.separate_o = headdim != 192;                  // overlap_sO_sQ for head dim 192
  return a;
}

namespace {

constexpr std::uint32_t kTileQ = 128;      // query rows per softmax warpgroup (TMEM lanes)
constexpr std::uint32_t kTileK = FmhaSchedule::kKeysPerTile;  // keys per K/V tile
using attention::kAtom;
using attention::kChunk;
using attention::kChunkBytes;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// TMEM columns (the real kernel's map).
constexpr std::uint32_t kColS[2] = {0, 128};
constexpr std::uint32_t kPOffset = 32;     // P_i (bf16 pairs, 64 columns) inside S_i
constexpr std::uint32_t kColO[2] = {256, 384};

// Warp roles.
enum class Role { Softmax0, Softmax1, Correction, Mma, Load, Epilogue, Empty };
Role role_of(std::uint32_t warp) {
  if (warp < 4) return Role::Softmax0;
  if (warp < 8) return Role::Softmax1;
  if (warp < 12) return Role::Correction;
  if (warp == 12) return Role::Mma;
  if (warp == 13) return Role::Load;
  if (warp == 14) return Role::Epilogue;
  return Role::Empty;
}

using attention::tmem_registers;

enum Barrier : std::uint32_t {
  QFull, QEmpty, SFull, PFull, StatsFull, StatsEmpty, SumFull, SumEmpty, OFull, OReady, EpiFull, OEmpty, kBarriers
};
constexpr const char* kBarrierNames[] = {"q.full",   "q.empty", "s.full", "p.full", "stats.full", "stats.empty",
                                         "sum.full", "sum.empty", "o.full", "o.ready", "epi.full", "o.empty"};

// SMEM: the K/V pipeline's and the named barriers and the TMEM address slot in the first KiB, the
// softmax statistics (m_old, m_new, row sum per row of each Q tile) in the next 2 KiB; then Q0, Q1
// (each headdim / 64 boxes of 128 rows x 128 bytes), the K/V stages, and (separate_o) O0, O1
// staged for the epilogue's TMA stores; otherwise O_i is staged in Q_i's space once the last S
// MMA of the unit read it.
struct Layout {
  std::uint32_t chunks_qk = 2, chunks_v = 2, stages = 0;
  bool uneven = false;  // 3 stages of K tiles larger than V tiles (FlashAttention-4's uneven_kv_smem)
  bool separate_o = false;
  std::uint32_t named = 0, tmem_slot = 0, stats = 1024;
  std::uint32_t q = 3072, kv = 0, o = 0, lse = 0, smem = 0;

  std::uint32_t q_bytes() const { return chunks_qk * kChunkBytes; }
  std::uint32_t k_bytes() const { return chunks_qk * kChunkBytes; }
  std::uint32_t v_bytes() const { return chunks_v * kChunkBytes; }
  std::uint32_t stage_bytes() const { return std::max(k_bytes(), v_bytes()); }
  std::uint32_t kv_bytes() const {
    return uneven ? 2 * k_bytes() + v_bytes() : stages * stage_bytes();
  }
  SmemAddr q_tile(std::uint32_t i) const { return SmemAddr{q + i * q_bytes()}; }
  // Where K/V load number `load` goes (K_j is load 2j, V_j load 2j + 1). Uneven: the stages are
  // (k + v) / 2 apart and the middle one moves by (k - v) / 2, down for a K, up for a V, so that
  // [K, V, K] and [V, K, V] both fit in 2 k + v.
  SmemAddr kv_load(std::uint64_t load) const {
    const auto s = static_cast<std::uint32_t>(load % stages);
    if (!uneven) return SmemAddr{kv + s * stage_bytes()};
    const std::uint32_t half_gap = (k_bytes() - v_bytes()) / 2, at = kv + s * (k_bytes() + v_bytes()) / 2;
    return SmemAddr{s != 1 ? at : load % 2 == 0 ? at - half_gap : at + half_gap};
  }
  // Named barrier `which` (see Barrier) of Q tile i.
  MBarrierRef bar(std::uint32_t which, std::uint32_t i) const { return MBarrierRef{named + 16 * which + 8 * i}; }
  // Statistics of Q tile i, one float per row: field 0 m_old (or, at the end, the row sum), 1 m_new.
  SmemAddr stat(std::uint32_t i, std::uint32_t field, std::uint32_t row) const {
    return SmemAddr{stats + ((i * 2 + field) * kTileQ + row) * 4};
  }
  // LSE staging of Q tile i: the 32 rows of each quadrant, 128 bytes.
  SmemAddr lse_box(std::uint32_t i, std::uint32_t quadrant) const { return SmemAddr{lse + (i * 4 + quadrant) * 128}; }
  // O staging of Q tile i: 32 rows of one 64-column chunk per (quadrant, chunk), 4 KiB each.
  SmemAddr o_box(std::uint32_t i, std::uint32_t quadrant, std::uint32_t c) const {
    const std::uint32_t base = separate_o ? o + i * chunks_v * kChunkBytes : q_tile(i).offset;
    return SmemAddr{base + (quadrant * chunks_v + c) * 4096};
  }
};

struct Problem {
  const FmhaParams& p;
  std::uint32_t kv_heads, dqk, dv;
  std::vector<std::uint32_t> lens;  // tokens of each sequence
  float scale_log2;                 // softmax_scale * log2(e)
};

struct Kernel {
  const Problem& pr;
  const FmhaSchedule& sched;
  const TensorMap& q_map;  // box: 64 columns x 128 rows of one (batch, head)
  const TensorMap& k_map;
  const TensorMap& v_map;
  const TensorMap& o_map;  // box: 64 columns x 32 rows
  Layout l;
  InstrDescriptor s_desc, pv_desc;
  const CoreBlock& softmax_code;    // one row of a tile of S, per thread
  const CoreBlock& rescale_code;    // one row of O times its factor
  const CoreBlock& normalize_code;  // one row of O over its sum, packed
  std::array<bool, kTileK> emulated;  // which scores' exp2 runs in software
  std::uint64_t* rescales;  // O rescales done (per warp and Q tile)
  const TensorMap* lse_map;  // with FmhaParams::lse: box 32 rows of one (batch, head)

  static SmemDescriptor k_major(SmemAddr chunk, std::uint32_t within) { return attention::k_major(chunk, within); }
  // V as the B operand of O += P V: N = head dim, K = keys; `k0` the first key of the MMA.
  static SmemDescriptor v_operand(SmemAddr stage, std::uint32_t k0) { return attention::mn_major(stage, k0); }
  std::uint32_t bh(const FmhaWorkUnit& u) const { return u.b * pr.p.heads + u.h; }
  std::uint32_t kv_bh(const FmhaWorkUnit& u) const {
    return u.b * pr.kv_heads + u.h / (pr.p.heads / pr.kv_heads);
  }
  std::int32_t row(const FmhaWorkUnit& u, std::uint32_t i, std::uint32_t within = 0) const {
    return static_cast<std::int32_t>(u.qb * 2 * kTileQ + i * kTileQ + within);
  }

  Task operator()(Warp& w) const {
    const PipelineTmaUmmaAsync kv(SmemAddr{0}, {.stages = l.stages, .transaction_bytes = l.k_bytes(), .name = "kv"});
    const Role role = role_of(w.warp_idx());
    if (w.warp_idx() == 12) {
      kv.init(w);
      for (std::uint32_t which = 0; which < kBarriers; ++which)
        for (std::uint32_t i = 0; i < 2; ++i) {
          // q.empty: the MMA warp's commit after the unit's last S MMA, and the epilogue's arrival
          // once O's stores have read SMEM when O is staged in Q's space.
          const std::uint32_t count = which == QEmpty ? (l.separate_o ? 1 : 2)
                                      : which == QFull || which == SFull || which == OFull || which == OEmpty ? 1
                                                                                                              : 4;
          w.mbarrier_init(l.bar(which, i), count, fmt::format("{}[{}]", kBarrierNames[which], i));
        }
      co_await w.tcgen05_alloc(SmemAddr{l.tmem_slot}, 512);
      w.tcgen05_relinquish_alloc_permit();
    }
    co_await w.syncthreads();
    const TmemAddr tmem{w.ld_shared_u32(SmemAddr{l.tmem_slot})};
    // Registers per role (CUTLASS: softmax 192, correction 96, the rest 32): the softmax
    // warpgroups' .inc waits until the others have given theirs back.
    if (role == Role::Softmax0 || role == Role::Softmax1)
      co_await w.setmaxnreg_inc(192);
    else
      w.setmaxnreg_dec(role == Role::Correction ? 96 : 32);

    switch (role) {
      case Role::Load: co_await load(w, kv); break;
      case Role::Mma: co_await mma(w, kv, tmem); break;
      case Role::Softmax0:
      case Role::Softmax1: co_await softmax(w, role == Role::Softmax0 ? 0 : 1, tmem); break;
      case Role::Correction: co_await correction(w, tmem); break;
      case Role::Epilogue: co_await epilogue(w); break;
      case Role::Empty: w.set_role("Empty"); break;
    }
    co_await w.syncthreads();
    if (role == Role::Mma) w.tcgen05_dealloc(tmem, 512);
  }

  // Q_0 and Q_1 of each unit (once the previous unit's S MMAs, or with O staged in Q's space its
  // O stores, are done with Q_i), then K_j and V_j per tile, each in its own stage.
  Task load(Warp& w, const PipelineTmaUmmaAsync& kv) const {
    w.set_role("Load");
    PipelineState st = make_producer_start_state(l.stages);
    for (std::uint32_t k = 0; const FmhaWorkUnit* u = sched.unit(w.cta_idx(), k); ++k) {
      for (std::uint32_t i = 0; i < 2; ++i) {
        if (k > 0) co_await w.mbarrier_wait(l.bar(QEmpty, i), (k - 1) & 1u);
        w.mbarrier_arrive_expect_tx(l.bar(QFull, i), l.q_bytes());
        for (std::uint32_t c = 0; c < l.chunks_qk; ++c)
          w.tma_load(q_map, SmemAddr{l.q_tile(i).offset + c * kChunkBytes}, l.bar(QFull, i),
                     {static_cast<std::int32_t>(c * kChunk), row(*u, i), static_cast<std::int32_t>(bh(*u))});
      }
      for (std::uint32_t j = 0; j < u->kv_tiles; ++j)
        for (const bool is_k : {true, false}) {
          const std::uint32_t chunks = is_k ? l.chunks_qk : l.chunks_v;
          // Uneven stages: a large tile into stage 0 overlaps the large one two loads back in the
          // middle stage ([K, V, K] after [V, K, V]), so it also waits for that one's release.
          if (l.uneven && st.count % 6 == 0 && st.count > 0)
            co_await w.mbarrier_wait(kv.empty(1), ((st.count + 1) / 3 & 1u) ^ 1u);
          co_await kv.producer_acquire(w, st, chunks * kChunkBytes);
          for (std::uint32_t c = 0; c < chunks; ++c)
            w.tma_load(is_k ? k_map : v_map, SmemAddr{l.kv_load(st.count).offset + c * kChunkBytes},
                       kv.producer_get_barrier(st),
                       {static_cast<std::int32_t>(c * kChunk), static_cast<std::int32_t>(j * kTileK),
                        static_cast<std::int32_t>(kv_bh(*u))});
          ++st;
        }
    }
    co_await kv.producer_tail(w, st);
  }

  // The real kernel's order, which lets each softmax warpgroup work while the other's P V runs:
  // S0_0, S1_0, O0 += P0 V_0; then per tile j: S0_j, O1 += P1 V_{j-1}, S1_j, O0 += P0 V_j; then
  // O1 += P1 V_{n-1}. K_j and V_j take consecutive stages (loads 2j and 2j+1); V_j is released
  // after K_{j+1}, out of load order, which the per-stage empty barriers allow. Barrier phases
  // count this CTA's tiles over all its units (t0: the tiles of the units before).
  Task mma(Warp& w, const PipelineTmaUmmaAsync& kv, TmemAddr tmem) const {
    w.set_role("MMA");
    std::uint32_t t0 = 0;
    for (std::uint32_t k = 0; const FmhaWorkUnit* u = sched.unit(w.cta_idx(), k); ++k) {
      const std::uint32_t n = u->kv_tiles;
      for (std::uint32_t i = 0; i < 2; ++i) co_await w.mbarrier_wait(l.bar(QFull, i), k & 1u);
      auto stage = [&](std::uint32_t load) {  // the pipeline state of this unit's K/V load `load`
        const std::uint32_t g = 2 * t0 + load;
        return PipelineState{l.stages, g % l.stages, (g / l.stages) & 1u, g};
      };
      auto s_mma = [&](std::uint32_t i, std::uint32_t j) {
        const SmemAddr k_tile = l.kv_load(stage(2 * j).count);
        for (std::uint32_t kb = 0; kb < pr.dqk / 16; ++kb) {
          const std::uint32_t c = kb / 4, within = (kb % 4) * 32;
          w.tcgen05_mma(MmaKind::F16, tmem + kColS[i], k_major(SmemAddr{l.q_tile(i).offset + c * kChunkBytes}, within),
                        k_major(SmemAddr{k_tile.offset + c * kChunkBytes}, within), s_desc, kb > 0);
        }
        w.tcgen05_commit(l.bar(SFull, i));
        if (j + 1 == n) w.tcgen05_commit(l.bar(QEmpty, i));  // the unit's last read of Q_i
      };
      // O_i += P_i V_j once P_i of tile j is in TMEM and O_i is ready: rescaled (j > 0), or free
      // of the previous unit's O (j = 0).
      auto pv_mma = [&](std::uint32_t i, std::uint32_t j) -> Task {
        co_await w.mbarrier_wait(l.bar(PFull, i), (t0 + j) & 1u);
        co_await w.mbarrier_wait(l.bar(OReady, i), (t0 + j) & 1u);
        w.tcgen05_fence_after_thread_sync();
        const SmemAddr v_tile = l.kv_load(stage(2 * j + 1).count);
        for (std::uint32_t kb = 0; kb < kTileK / 16; ++kb)
          w.tcgen05_mma(MmaKind::F16, tmem + kColO[i], tmem + (kColS[i] + kPOffset + kb * 8),
                        v_operand(v_tile, kb * 16), pv_desc, j > 0 || kb > 0);
        w.tcgen05_commit(l.bar(OFull, i));
      };
      co_await kv.consumer_wait(w, stage(0));
      w.tcgen05_fence_after_thread_sync();
      s_mma(0, 0);
      s_mma(1, 0);
      kv.consumer_release(w, stage(0));
      co_await kv.consumer_wait(w, stage(1));
      co_await pv_mma(0, 0);
      for (std::uint32_t j = 1; j < n; ++j) {
        co_await kv.consumer_wait(w, stage(2 * j));
        s_mma(0, j);
        co_await pv_mma(1, j - 1);
        kv.consumer_release(w, stage(2 * j - 1));
        s_mma(1, j);
        kv.consumer_release(w, stage(2 * j));
        co_await kv.consumer_wait(w, stage(2 * j + 1));
        co_await pv_mma(0, j);
      }
      co_await pv_mma(1, n - 1);
      kv.consumer_release(w, stage(2 * n - 1));
      t0 += n;
    }
  }

  // One row per thread (lane = row of the warp's quadrant): row max with masking, the
  // statistics to correction, P = exp2(S * scale_log2 - max * scale_log2) as bf16 into TMEM, the
  // running row sum; the final sum and max at the end of each unit.
  Task softmax(Warp& w, std::uint32_t i, TmemAddr tmem) const {
    const std::uint32_t q = w.warp_idx() % 4;
    w.set_role(fmt::format("Softmax{} w{}", i, w.warp_idx() % 4));
    std::vector<std::uint32_t> s_own, p_own;
    const std::span<std::uint32_t> s = tmem_registers(w, s_own, 32 * kTileK), pbits = tmem_registers(w, p_own, 32 * kTileK / 2);
    std::vector<float> m(32), sum(32), m_prev(32);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    std::uint32_t t0 = 0;
    for (std::uint32_t k = 0; const FmhaWorkUnit* u = sched.unit(w.cta_idx(), k); ++k) {
      const std::uint32_t n = u->kv_tiles;
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (std::uint32_t j = 0; j < n; ++j) {
        co_await w.mbarrier_wait(l.bar(SFull, i), (t0 + j) & 1u);
        w.tcgen05_fence_after_thread_sync();
        for (std::uint32_t c = 0; c < kTileK / 32; ++c)
          w.tcgen05_ld(lanes + (kColS[i] + 32 * c), TmemShape::S32x32b, 32, s.subspan(c * 32 * 32, 32 * 32));
        co_await w.tcgen05_wait_ld();
        if (w.functional()) compute_p(i, q, *u, j, s, m, m_prev, sum, pbits);
        co_await w.run(softmax_code);
        if (j > 0)
          co_await w.mbarrier_wait(l.bar(StatsEmpty, i), (t0 + j - 1) & 1u);
        else if (k > 0)
          co_await w.mbarrier_wait(l.bar(SumEmpty, i), (k - 1) & 1u);  // correction read the last unit's sum
        write_stats(w, i, q, m_prev, m);
        w.mbarrier_arrive(l.bar(StatsFull, i));
        w.tcgen05_st(lanes + (kColS[i] + kPOffset), TmemShape::S32x32b, kTileK / 2, pbits);
        co_await w.tcgen05_wait_st();
        w.tcgen05_fence_before_thread_sync();
        w.mbarrier_arrive(l.bar(PFull, i));
      }
      co_await w.mbarrier_wait(l.bar(StatsEmpty, i), (t0 + n - 1) & 1u);  // correction read the last maxima
      write_stats(w, i, q, sum, m);
      w.mbarrier_arrive(l.bar(SumFull, i));
      t0 += n;
    }
  }

  // The warp's 32 rows of both statistics fields (one st.shared each: a float per lane).
  void write_stats(Warp& w, std::uint32_t i, std::uint32_t q, const std::vector<float>& field0,
                   const std::vector<float>& m) const {
    w.st_shared_tensor(l.stat(i, 0, 32 * q), std::as_bytes(std::span(field0)));
    w.st_shared_tensor(l.stat(i, 1, 32 * q), std::as_bytes(std::span(m)));
  }

  void compute_p(std::uint32_t i, std::uint32_t q, const FmhaWorkUnit& u, std::uint32_t j,
                 std::span<const std::uint32_t> s, std::vector<float>& m, std::vector<float>& m_prev,
                 std::vector<float>& sum, std::span<std::uint32_t> pbits) const {
    const std::uint32_t row0 = static_cast<std::uint32_t>(row(u, i, 32 * q)), len = pr.lens[u.b];
    const double threshold = pr.p.algorithm.rescale_threshold;
    for (std::uint32_t r = 0; r < 32; ++r) {
      const std::uint32_t query = row0 + r;
      auto score = [&](std::uint32_t k) {  // column k of row r: regs[lane * 32 + reg] of chunk k / 32
        const std::uint32_t key = j * kTileK + k;
        if (key >= len || (pr.p.causal && key > query)) return kNegInf;
        return std::bit_cast<float>(s[(k / 32) * 32 * 32 + r * 32 + k % 32]);
      };
      float mx = m[r];
      for (std::uint32_t k = 0; k < kTileK; ++k) mx = std::max(mx, score(k));
      // FlashAttention-4 keeps the old max while it grew by at most the threshold (P then reaches
      // up to 2^threshold; sum and O use the same stale max, so O is unchanged).
      if (threshold > 0 && m[r] != kNegInf && (mx - m[r]) * pr.scale_log2 <= threshold) mx = m[r];
      m_prev[r] = m[r];
      m[r] = mx;
      const float base = mx == kNegInf ? 0.0f : mx * pr.scale_log2;
      const float alpha = m_prev[r] == kNegInf ? 0.0f : std::exp2(m_prev[r] * pr.scale_log2 - base);
      float add = 0;
      for (std::uint32_t k = 0; k < kTileK; k += 2) {
        std::uint32_t packed = 0;
        for (std::uint32_t h = 0; h < 2; ++h) {
          const float x = score(k + h) * pr.scale_log2 - base;
          const float p = emulated[k + h] ? exp2_poly(x) : (x == kNegInf ? 0.0f : std::exp2(x));
          add += p;
          std::uint16_t bits = 0;
          store_from_float(pr.p.dtype, p, reinterpret_cast<std::byte*>(&bits));
          packed |= static_cast<std::uint32_t>(bits) << (16 * h);
        }
        pbits[r * (kTileK / 2) + k / 2] = packed;
      }
      sum[r] = sum[r] * alpha + add;
    }
  }

  // Rescales O_i by exp2((m_old - m_new) * scale_log2) where a row's max grew, between the
  // P V of tile j-1 and that of tile j; at the end of a unit, O_i / row sum to SMEM for the
  // epilogue.
  Task correction(Warp& w, TmemAddr tmem) const {
    const std::uint32_t q = w.warp_idx() % 4, d = pr.dv;
    w.set_role(fmt::format("Correction w{}", q));
    std::vector<std::uint32_t> o_own;
    const std::span<std::uint32_t> o = tmem_registers(w, o_own, 32 * d);
    std::vector<float> scale(32), m_old(32), m_new(32), total(32), lse(32);
    std::array<std::vector<float>, 2> m_last{std::vector<float>(32), std::vector<float>(32)};
    std::vector<std::byte> row_bytes(32 * kChunk * 2);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    // Timing mode has no scores: when this warp's rows' maxima grow is drawn (RowMaxModel), from
    // one stream per unit, warp and Q tile.
    const RowMaxModel::Params model{.score_std = pr.p.score_std, .threshold = pr.p.algorithm.rescale_threshold};
    std::array<RowMaxModel, 2> growth{RowMaxModel(model), RowMaxModel(model)};
    std::uint32_t t0 = 0;
    for (std::uint32_t k = 0; const FmhaWorkUnit* u = sched.unit(w.cta_idx(), k); ++k) {
      const std::uint32_t n = u->kv_tiles;
      const std::uint64_t id = sched.index(w.cta_idx(), k);
      if (!w.functional())
        for (std::uint32_t i = 0; i < 2; ++i) growth[i].restart(mix64(id * 8 + q * 2 + i), n);
      for (std::uint32_t j = 0; j < n; ++j)
        for (std::uint32_t i = 0; i < 2; ++i) {
          if (j == 0) w.mbarrier_arrive(l.bar(OReady, i));  // O_i is free: the last unit's was read below
          co_await w.mbarrier_wait(l.bar(StatsFull, i), (t0 + j) & 1u);
          w.ld_shared_tensor(l.stat(i, 0, 32 * q), std::as_writable_bytes(std::span(m_old)));
          w.ld_shared_tensor(l.stat(i, 1, 32 * q), std::as_writable_bytes(std::span(m_new)));
          if (j + 1 == n) m_last[i] = m_new;  // the base of the row sums
          bool grew = false;  // functional mode's scores; timing mode draws growth instead
          if (w.functional())
            for (std::uint32_t r = 0; r < 32; ++r) {
              scale[r] = 1.0f;
              if (m_old[r] != m_new[r] && m_old[r] != kNegInf) {
                scale[r] = std::exp2((m_old[r] - m_new[r]) * pr.scale_log2);
                grew = true;
              }
            }
          w.mbarrier_arrive(l.bar(StatsEmpty, i));
          if (j == 0) continue;  // nothing accumulated yet
          co_await w.mbarrier_wait(l.bar(OFull, i), (t0 + j - 1) & 1u);
          w.tcgen05_fence_after_thread_sync();
          if (w.functional() ? grew : growth[i].rescales(j)) {  // a warp vote: any row of the 32
            ++*rescales;
            w.tcgen05_ld(lanes + kColO[i], TmemShape::S32x32b, d, o);
            co_await w.tcgen05_wait_ld();
            if (w.functional())
              for (std::uint32_t r = 0; r < 32; ++r)
                for (std::uint32_t c = 0; c < d; ++c)
                  o[r * d + c] = std::bit_cast<std::uint32_t>(std::bit_cast<float>(o[r * d + c]) * scale[r]);
            co_await w.run(rescale_code);
            w.tcgen05_st(lanes + kColO[i], TmemShape::S32x32b, d, o);
            co_await w.tcgen05_wait_st();
          }
          w.tcgen05_fence_before_thread_sync();
          w.mbarrier_arrive(l.bar(OReady, i));
        }
      for (std::uint32_t i = 0; i < 2; ++i) {
        co_await w.mbarrier_wait(l.bar(SumFull, i), k & 1u);
        w.ld_shared_tensor(l.stat(i, 0, 32 * q), std::as_writable_bytes(std::span(total)));
        w.mbarrier_arrive(l.bar(SumEmpty, i));
        co_await w.mbarrier_wait(l.bar(OFull, i), (t0 + n - 1) & 1u);
        w.tcgen05_fence_after_thread_sync();
        w.tcgen05_ld(lanes + kColO[i], TmemShape::S32x32b, d, o);
        co_await w.tcgen05_wait_ld();
        co_await w.run(normalize_code);
        if (k > 0) co_await w.mbarrier_wait(l.bar(OEmpty, i), (k - 1) & 1u);  // the last unit's O stored
        for (std::uint32_t c = 0; c < l.chunks_v; ++c) {
          if (w.functional())
            for (std::uint32_t r = 0; r < 32; ++r) {
              for (std::uint32_t e = 0; e < kChunk; ++e) {
                const float v = total[r] > 0 ? std::bit_cast<float>(o[r * d + c * kChunk + e]) / total[r] : 0.0f;
                store_from_float(pr.p.dtype, v, &row_bytes[(r * kChunk + e) * 2]);
              }
            }
          w.st_shared_tensor(l.o_box(i, q, c), row_bytes);
        }
        if (lse_map) {  // ln(sum) + max / sqrt(d): lg2, then one FMA (scale_log2 * max + lg2(sum)) times ln 2
          for (std::uint32_t r = 0; r < 32; ++r)
            lse[r] = total[r] > 0 && m_last[i][r] != kNegInf
                         ? (m_last[i][r] * pr.scale_log2 + std::log2(total[r])) * 0.6931471805599453f
                         : kNegInf;
          w.execute(CorePipe::Mufu, 1);
          w.execute(CorePipe::Fma, 2);
          w.st_shared_tensor(l.lse_box(i, q), std::as_bytes(std::span(lse)));
        }
        w.fence_proxy_async();
        w.mbarrier_arrive(l.bar(EpiFull, i));
      }
      t0 += n;
    }
  }

  // O_i's TMA stores; once they have read SMEM, the staging (and, when O is staged in Q_i's
  // space, Q_i) is free for the next unit.
  Task epilogue(Warp& w) const {
    w.set_role("Epilogue");
    for (std::uint32_t k = 0; const FmhaWorkUnit* u = sched.unit(w.cta_idx(), k); ++k)
      for (std::uint32_t i = 0; i < 2; ++i) {
        co_await w.mbarrier_wait(l.bar(EpiFull, i), k & 1u);
        for (std::uint32_t q = 0; q < 4; ++q)
          for (std::uint32_t c = 0; c < l.chunks_v; ++c)
            w.tma_store(o_map, l.o_box(i, q, c),
                        {static_cast<std::int32_t>(c * kChunk), row(*u, i, 32 * q), static_cast<std::int32_t>(bh(*u))});
        if (lse_map)
          for (std::uint32_t q = 0; q < 4; ++q)
            w.tma_store(*lse_map, l.lse_box(i, q), {row(*u, i, 32 * q), static_cast<std::int32_t>(bh(*u))});
        w.bulk_commit_group();
        co_await w.bulk_wait_group_read(0);
        w.mbarrier_arrive(l.bar(OEmpty, i));
        if (!l.separate_o) w.mbarrier_arrive(l.bar(QEmpty, i));
      }
    co_await w.bulk_wait_group(0);
  }
};

void validate(const HardwareConfig& config, const FmhaParams& p) {
  if (config.tmem.columns < 512)
    throw InputError(fmt::format("the {} config has {} TMEM columns; fmha needs 512 (a Blackwell config such as "
                                 "sim_configs/b200.yaml)",
                                 config.name, config.tmem.columns));
  if (p.headdim != 64 && p.headdim != 128 && p.headdim != 192)
    throw InputError(fmt::format("--headdim {}: the kernel supports head dims 64, 128 and 192", p.headdim));
  const std::uint32_t dv = p.headdim_v ? p.headdim_v : p.headdim;
  if (dv != 64 && dv != 128)
    throw InputError(fmt::format("--headdim-v {}: V's head dim must be 64 or 128 (O_i has 128 TMEM columns)", dv));
  if (p.dtype != DataType::BF16 && p.dtype != DataType::F16)
    throw InputError(fmt::format("--dtype {}: Q, K, V are bf16 or f16", name_of(p.dtype)));
  attention::validate_shape({p.batch, p.heads, p.kv_heads, p.seqlen, p.seqlens},
                            (p.seqlen + 2 * kTileQ - 1) / (2 * kTileQ));
  const FmhaAlgorithm& a = p.algorithm;
  if (a.exp2_emu_freq != 0 && (a.exp2_emu_res > a.exp2_emu_freq || a.exp2_emu_start > kTileK / 32))
    throw InputError(fmt::format("--exp2-emu {}:{}:{}: FREQ:RES:START needs RES <= FREQ and START <= {}", a.exp2_emu_freq,
                                 a.exp2_emu_res, a.exp2_emu_start, kTileK / 32));
  // P reaches 2^threshold under a stale max: it must stay finite in the element type.
  const double log2_max = p.dtype == DataType::F16 ? std::log2(65504.0) : 127.0;
  if (!(a.rescale_threshold >= 0 && a.rescale_threshold < log2_max))
    throw InputError(fmt::format("--rescale-threshold {}: must be in [0, {:.2f}) for {} (P reaches 2^threshold)",
                                 a.rescale_threshold, log2_max, name_of(p.dtype)));
  if (!(p.score_std > 0)) throw InputError(fmt::format("--score-std {}: must be positive", p.score_std));
}

// The SMEM map: Q tiles, as many K/V stages as fit (FlashAttention-4's 3 uneven stages for
// head dims 192/128 where only 2 even ones would), and O's own staging when the algorithm has it.
Layout layout(const HardwareConfig& config, const FmhaParams& p, std::uint32_t dv) {
  Layout l;
  l.chunks_qk = p.headdim / kChunk;
  l.chunks_v = dv / kChunk;
  l.separate_o = p.algorithm.separate_o;
  l.named = PipelineBarriers::smem_bytes(16);  // after the K/V pipeline's barriers (16 stages at most)
  l.tmem_slot = l.named + 16 * kBarriers;
  l.kv = align_up(l.q + 2 * l.q_bytes(), kAtom);
  const std::uint32_t o_bytes = (l.separate_o ? 2 * l.chunks_v * kChunkBytes : 0) + (p.lse ? 1024 : 0);
  const std::uint32_t need = l.kv + 2 * l.stage_bytes() + o_bytes;
  if (config.sm.max_smem_per_cta < need)
    throw InputError(fmt::format("head dims {}/{}: Q tiles{} and two K/V stages need {} bytes of SMEM; the {} config "
                                 "allows {} per CTA",
                                 p.headdim, dv, l.separate_o ? ", O staging" : "", need, config.name,
                                 config.sm.max_smem_per_cta));
  const std::uint32_t room = config.sm.max_smem_per_cta - l.kv - o_bytes;
  const std::uint32_t fit = std::min(16u, room / l.stage_bytes());
  const bool uneven_fits = l.k_bytes() > l.v_bytes() && room >= 2 * l.k_bytes() + l.v_bytes();
  l.stages = p.stages ? p.stages : fit == 2 && uneven_fits ? 3 : fit;
  l.uneven = l.stages == 3 && fit < 3;
  if (l.stages < 2 || l.stages > 16 || (l.stages > fit && !l.uneven))
    throw InputError(fmt::format("--stages {}: 2..{} K/V stages of {} bytes fit the {} bytes a CTA may have", l.stages,
                                 uneven_fits && fit == 2 ? 3 : fit, l.stage_bytes(), config.sm.max_smem_per_cta));
  l.o = l.kv + l.kv_bytes();
  l.lse = l.o + (l.separate_o ? 2 * l.chunks_v * kChunkBytes : 0);  // after O's own staging
  l.smem = l.o + o_bytes;
  return l;
}

}  // namespace

FmhaResult run_fmha(const HardwareConfig& config, const SimOptions& options, const FmhaParams& p, bool check) {
  validate(config, p);
  const std::uint32_t kvh = p.kv_heads ? p.kv_heads : p.heads, d = p.headdim, dv = p.headdim_v ? p.headdim_v : d;
  const Problem pr{p, kvh, d, dv, p.seqlens.empty() ? std::vector<std::uint32_t>(p.batch, p.seqlen) : p.seqlens,
                   static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)) * 1.4426950408889634)};
  const Layout l = layout(config, p, dv);
  const FmhaSchedule sched({.lens = pr.lens, .heads = p.heads, .seqlen = p.seqlen, .headdim = d, .headdim_v = dv,
                            .causal = p.causal, .lpt = p.algorithm.lpt,
                            .workers = p.algorithm.persistent ? config.sm.count : 0});

  Simulator sim(config, options);
  const std::uint64_t rows = static_cast<std::uint64_t>(p.seqlen) * p.batch;
  const std::uint64_t q_bytes = 2ull * d * rows * p.heads, k_bytes = 2ull * d * rows * kvh,
                      v_bytes = 2ull * dv * rows * kvh, o_bytes = 2ull * dv * rows * p.heads;
  const GmemAddr qa = sim.gmem().alloc(q_bytes), ka = sim.gmem().alloc(k_bytes), va = sim.gmem().alloc(v_bytes),
                 oa = sim.gmem().alloc(o_bytes);
  auto map = [&](GmemAddr a, std::uint32_t dim, std::uint32_t heads, std::uint32_t box_rows, Swizzle sw) {
    return TensorMap::tiled({.dtype = p.dtype, .address = a,
                             .dims = {dim, p.seqlen, static_cast<std::uint64_t>(p.batch) * heads},
                             .strides = {2ull * dim, 2ull * dim * p.seqlen}, .box = {kChunk, box_rows, 1}, .swizzle = sw});
  };
  const TensorMap q_map = map(qa, d, p.heads, kTileQ, Swizzle::B128), k_map = map(ka, d, kvh, kTileK, Swizzle::B128),
                  v_map = map(va, dv, kvh, kTileK, Swizzle::B128), o_map = map(oa, dv, p.heads, 32, Swizzle::None);
  const std::uint32_t lse_pitch = align_up(4 * p.seqlen, 16);
  const GmemAddr lse = p.lse ? sim.gmem().alloc(static_cast<std::uint64_t>(lse_pitch) * p.batch * p.heads) : GmemAddr{};
  std::optional<TensorMap> lse_map;
  if (p.lse)
    lse_map = TensorMap::tiled({.dtype = DataType::F32, .address = lse,
                                .dims = {p.seqlen, static_cast<std::uint64_t>(p.batch) * p.heads},
                                .strides = {lse_pitch}, .box = {32, 1}});
  if (sim.gmem().holds_data()) {
    attention::fill_random(sim.gmem().bytes(qa, q_bytes), p.dtype, 11, 2.0f);
    attention::fill_random(sim.gmem().bytes(ka, k_bytes), p.dtype, 12, 2.0f);
    attention::fill_random(sim.gmem().bytes(va, v_bytes), p.dtype, 13, 1.0f);
  }

  const FmhaAlgorithm& a = p.algorithm;
  const auto emulate = a.exp2_emu_freq ? fa4_emulated_pairs(kTileK, a.exp2_emu_freq, a.exp2_emu_res, a.exp2_emu_start)
                                       : std::function<bool(std::uint32_t)>{};
  const CoreBlock softmax_code = softmax_row_block(
      {.columns = kTileK, .emulate = emulate, .paired = config.pipes.paired_fp32, .stale_max = a.rescale_threshold > 0},
      config);
  const CoreBlock rescale_code = o_rescale_block(dv, config), normalize_code = o_normalize_block(dv, config);
  FmhaResult r;
  Kernel kernel{pr, sched, q_map, k_map, v_map, o_map, l,
                encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype, .m = kTileQ, .n = kTileK}),
                encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype, .b_major = Major::MN,
                                                           .m = kTileQ, .n = dv}),
                softmax_code, rescale_code, normalize_code, {}, &r.rescales, lse_map ? &*lse_map : nullptr};
  std::uint64_t row_tiles = 0;  // rows x K/V tiles the softmax processes
  for (const FmhaWorkUnit& u : sched.order()) row_tiles += 2ull * kTileQ * u.kv_tiles;
  for (std::uint32_t k = 0; k < kTileK; ++k) {
    kernel.emulated[k] = emulate && emulate(k);
    (kernel.emulated[k] ? r.exp2_emulated : r.exp2_mufu) += row_tiles;
  }
  r.stages = l.stages;
  r.ctas = sched.ctas();
  r.units = static_cast<std::uint32_t>(sched.order().size());
  const Kernel& run = kernel;
  r.run = sim.launch("fmha",
                     LaunchConfig{.grid_ctas = r.ctas, .block_threads = 512, .dynamic_smem_bytes = l.smem,
                                  .registers_per_thread = 128},
                     [&run](Warp& w) { return run(w); });
  for (std::uint32_t len : pr.lens)
    r.flops += 2.0 * p.heads * len * static_cast<double>(len) * (d + dv) * (p.causal ? 0.5 : 1.0);

  if (check && sim.gmem().holds_data())
    check_fmha_against_reference(sim, p, pr.lens, kvh, {qa, ka, va, oa}, r, lse, lse_pitch);
  return r;
}

namespace {

// --variant's algorithm with the explicit options over it.
FmhaAlgorithm algorithm_from_cli(const KernelArgs& a, const FmhaParams& p) {
  const std::string& variant = a.text("variant");
  if (variant != "cutlass" && variant != "fa4")
    throw InputError(fmt::format("--variant: cutlass or fa4, got '{}'", variant));
  FmhaAlgorithm alg = variant == "fa4" ? FmhaAlgorithm::fa4(p.headdim, p.causal) : FmhaAlgorithm::cutlass();
  if (const std::string& e = a.text("exp2-emu"); !e.empty()) {
    if (e == "off") {
      alg.exp2_emu_freq = 0;
    } else {
      std::uint32_t field[3] = {0, alg.exp2_emu_res, alg.exp2_emu_start};
      std::size_t at = 0;
      for (std::uint32_t f = 0; f < 3 && at <= e.size(); ++f) {
        const std::size_t colon = std::min(e.find(':', at), e.size());
        field[f] = static_cast<std::uint32_t>(
            parse_integer(e.substr(at, colon - at), "--exp2-emu FREQ[:RES[:START]] (e.g. 16:4:1, or off)", f == 0 ? 1 : 0, 32));
        at = colon + 1;
      }
      if (at <= e.size()) throw InputError(fmt::format("--exp2-emu '{}': at most FREQ:RES:START", e));
      alg.exp2_emu_freq = field[0], alg.exp2_emu_res = field[1], alg.exp2_emu_start = field[2];
    }
  }
  if (!a.text("rescale-threshold").empty()) alg.rescale_threshold = a.real("rescale-threshold", 0, 1e6);
  if (const std::string& s = a.text("scheduler"); !s.empty()) {
    if (s != "single" && s != "persistent") throw InputError(fmt::format("--scheduler: single or persistent, got '{}'", s));
    alg.persistent = s == "persistent";
  }
  if (const std::string& o = a.text("order"); !o.empty()) {
    if (o != "natural" && o != "lpt") throw InputError(fmt::format("--order: natural or lpt, got '{}'", o));
    alg.lpt = o == "lpt";
  }
  if (const std::string& o = a.text("o-staging"); !o.empty()) {
    if (o != "q" && o != "own") throw InputError(fmt::format("--o-staging: q or own, got '{}'", o));
    alg.separate_o = o == "own";
  }
  return alg;
}

KernelReport run_from_cli(const KernelRequest& req) {
  const KernelArgs& a = req.args;
  FmhaParams p;
  const attention::Shape shape = attention::shape_from_cli(a);
  p.batch = shape.batch, p.heads = shape.heads, p.kv_heads = shape.kv_heads, p.seqlen = shape.seqlen;
  p.seqlens = shape.seqlens;
  p.headdim = static_cast<std::uint32_t>(a.integer("headdim", 1, 1024));
  p.headdim_v = static_cast<std::uint32_t>(a.integer("headdim-v", 0, 1024));
  const auto t = parse_data_type(a.text("dtype"));
  if (!t) throw InputError(fmt::format("--dtype: unknown type '{}'", a.text("dtype")));
  p.dtype = *t;
  p.causal = a.flag("causal");
  p.lse = a.flag("lse");
  p.stages = static_cast<std::uint32_t>(a.integer("stages", 0, 16));
  p.score_std = a.real("score-std", 1e-6, 1e6);
  p.algorithm = algorithm_from_cli(a, p);
  const FmhaResult r = run_fmha(req.config, req.options, p, req.check);
  const FmhaAlgorithm& alg = p.algorithm;
  KernelReport rep;
  rep.kernel = "fmha";
  rep.problem = fmt::format(
      "O = softmax(Q K^T / sqrt(d)) V{}, batch {} x {} heads ({} K/V heads), seqlen {}{}, head dim {}{}, {}, {} K/V "
      "stages; {}: exp2 {}, rescale threshold {}, {} CTAs for {} units{}",
      p.causal ? " causal" : "", p.batch, p.heads, p.kv_heads ? p.kv_heads : p.heads, p.seqlen,
      p.seqlens.empty() ? "" : fmt::format(" (lengths {})", a.text("seqlens")), p.headdim,
      p.headdim_v && p.headdim_v != p.headdim ? fmt::format("/{}", p.headdim_v) : "", name_of(p.dtype), r.stages,
      a.text("variant"),
      alg.exp2_emu_freq ? fmt::format("emulated {}:{}:{}", alg.exp2_emu_freq, alg.exp2_emu_res, alg.exp2_emu_start)
                        : "on the MUFU",
      alg.rescale_threshold, r.ctas, r.units, alg.lpt ? ", LPT order" : "");
  rep.run = r.run;
  rep.checked = r.checked;
  rep.check_passed = r.matches;
  rep.check_detail = r.checked ? r.detail : "not checked";
  const double seconds = static_cast<double>(r.run.cycles) / (req.config.clock_ghz * 1e9);
  const auto& pipes = r.run.pipes;
  rep.figures = {{"tflops", seconds > 0 ? r.flops / seconds / 1e12 : 0.0},
                 {"flops", r.flops},
                 {"tensor_busy_fraction", r.run.mma_busy_fraction()},
                 {"mufu_busy_fraction", CorePipeStats::busy_fraction(pipes.mufu_busy_cycles, r.run.context())},
                 {"fma_busy_fraction", CorePipeStats::busy_fraction(pipes.fma_busy_cycles, r.run.context())},
                 {"issue_busy_fraction", CorePipeStats::busy_fraction(pipes.issue_cycles, r.run.context())},
                 {"tmem_port_busy_fraction", CorePipeStats::busy_fraction(pipes.tmem_port_cycles, r.run.context())},
                 {"rescales", r.rescales},
                 {"exp2_emulated", r.exp2_emulated},
                 {"exp2_mufu", r.exp2_mufu},
                 {"stages", r.stages},
                 {"ctas", r.ctas},
                 {"units", r.units}};
  return rep;
}
}  // namespace

KernelInfo fmha_kernel_info() {
  return KernelInfo{"fmha",
                    "Fused multi-head attention forward in the structure of CUTLASS's SM100 FMHA and FlashAttention-4: 2 "
                    "softmax warpgroups, correction, MMA, load and epilogue warps, S/P/O in TMEM, online softmax; "
                    "--variant fa4 adds FlashAttention-4's exp2 emulation, rescale threshold and schedulers",
                    attention::shape_params({{"headdim", "head dim of Q and K: 64, 128 or 192", "128"},
                     {"headdim-v", "head dim of V and O: 64 or 128; 0: as --headdim", "0"},
                     {"dtype", data_type_names({DataType::BF16, DataType::F16}), "bf16"},
                     {"causal", "1: causal mask (tiles above the diagonal skipped); the flag alone: 1", "0", true},
                     {"lse", "1: also write each row's log-sum-exp (fp32), as the backward pass needs; the flag alone: 1",
                      "0", true},
                     {"stages", "K/V SMEM stages; 0: as many as fit", "0"},
                     {"variant", "cutlass (the CUTLASS example's algorithm) or fa4 (FlashAttention-4's choices below)",
                      "cutlass"},
                     {"exp2-emu", "software exp2 FREQ[:RES[:START]] as FlashAttention-4 picks the pairs, or off; "
                                  "empty: the variant's", ""},
                     {"rescale-threshold", "log2 units the row max may lag before O is rescaled; empty: the variant's", ""},
                     {"scheduler", "single (one CTA per unit) or persistent (one per SM); empty: the variant's", ""},
                     {"order", "natural or lpt (longest first, L2 sections); empty: the variant's", ""},
                     {"o-staging", "q (O staged in Q's SMEM) or own; empty: the variant's", ""},
                     {"score-std", "timing mode: standard deviation of the scores s / sqrt(d) (1: randn inputs)", "1"}}),
                    &run_from_cli};
}

}  // namespace bwsim
