#include "bwsim/kernels/Fmha.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernel/Pipeline.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kTileQ = 128;      // query rows per softmax warpgroup (TMEM lanes)
constexpr std::uint32_t kTileK = 128;      // keys per K/V tile
constexpr std::uint32_t kChunk = 64;       // head-dim elements per 128-byte swizzle row
constexpr std::uint32_t kChunkBytes = kTileK * 128;  // one 128 x 128-byte box: 16 KiB
constexpr std::uint32_t kAtom = 1024;
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

// SMEM: the K/V pipeline's and the named barriers, the TMEM address slot and the softmax
// statistics (m_old, m_new, row sum per row of each Q tile) in the first 4 KiB; then Q0, Q1
// (each headdim / 64 boxes of 128 rows x 128 bytes; after the last S MMA read it, Q_i's space
// stages O_i for the epilogue's TMA stores); then the K/V stages.
struct Layout {
  std::uint32_t chunks = 2, stages = 0;
  std::uint32_t named = 0, tmem_slot = 0, stats = 1024;
  std::uint32_t q = 4096, kv = 0, smem = 0;

  std::uint32_t q_bytes() const { return chunks * kChunkBytes; }
  std::uint32_t stage_bytes() const { return chunks * kChunkBytes; }
  SmemAddr q_tile(std::uint32_t i) const { return SmemAddr{q + i * q_bytes()}; }
  SmemAddr stage(std::uint32_t s) const { return SmemAddr{kv + s * stage_bytes()}; }
  // Named barrier `which` (see Barrier) of Q tile i.
  MBarrierRef bar(std::uint32_t which, std::uint32_t i) const { return MBarrierRef{named + 16 * which + 8 * i}; }
  // Statistics of Q tile i, one float per row: field 0 m_old (or, at the end, the row sum), 1 m_new.
  SmemAddr stat(std::uint32_t i, std::uint32_t field, std::uint32_t row) const {
    return SmemAddr{stats + ((i * 2 + field) * kTileQ + row) * 4};
  }
  // O staging: Q_i's space, 32 rows of one 64-column chunk per (quadrant, chunk): 4 KiB each.
  SmemAddr o_box(std::uint32_t i, std::uint32_t quadrant, std::uint32_t c) const {
    return SmemAddr{q_tile(i).offset + (quadrant * chunks + c) * 4096};
  }
};

enum Barrier : std::uint32_t { QFull, SFull, PFull, StatsFull, StatsEmpty, OFull, OReady, SumFull, EpiFull, kBarriers };
constexpr const char* kBarrierNames[] = {"q.full", "s.full", "p.full", "stats.full", "stats.empty",
                                         "o.full", "o.ready", "sum.full", "epi.full"};

// What one CTA computes: 256 query rows (block qb) of one (sequence, head).
struct WorkUnit {
  std::uint32_t b, h, qb;
};

struct Problem {
  const FmhaParams& p;
  std::uint32_t kv_heads;
  std::vector<std::uint32_t> lens;  // tokens of each sequence
  std::vector<WorkUnit> units;      // by CTA
  float scale_log2;                 // softmax_scale * log2(e)

  Problem(const FmhaParams& params, std::uint32_t kvh, float scale)
      : p(params), kv_heads(kvh), lens(params.seqlens), scale_log2(scale) {
    if (lens.empty()) lens.assign(p.batch, p.seqlen);
    for (std::uint32_t b = 0; b < lens.size(); ++b)
      for (std::uint32_t h = 0; h < p.heads; ++h)
        for (std::uint32_t qb = 0; qb * 2 * kTileQ < lens[b]; ++qb) units.push_back({b, h, qb});
  }
  std::uint32_t kv_tiles(const WorkUnit& u) const {
    const std::uint32_t len = lens[u.b];
    const std::uint32_t keys = p.causal ? std::min(len, (u.qb + 1) * 2 * kTileQ) : len;
    return (keys + kTileK - 1) / kTileK;  // tiles wholly above the CTA's diagonal are skipped
  }
};

struct Kernel {
  const Problem& pr;
  const TensorMap& q_map;  // box: 64 columns x 128 rows of one (batch, head)
  const TensorMap& k_map;
  const TensorMap& v_map;
  const TensorMap& o_map;  // box: 64 columns x 32 rows
  Layout l;
  InstrDescriptor s_desc, pv_desc;
  std::uint64_t* rescales;  // O rescales done (functional mode: where a row's max grew)

  static SmemDescriptor k_major(SmemAddr chunk, std::uint32_t within) {
    return encode(SmemDescriptorFields{.start_address = chunk.offset + within, .leading_byte_offset = 16,
                                       .stride_byte_offset = kAtom, .layout = UmmaLayout::Swizzle128B});
  }
  // V as the B operand of O += P V: N = head dim (contiguous, 64 per chunk, chunks LBO apart),
  // K = keys (8-key groups SBO apart); `k0` the first key of the MMA.
  SmemDescriptor v_operand(SmemAddr stage, std::uint32_t k0) const {
    return encode(SmemDescriptorFields{.start_address = stage.offset + k0 / 8 * kAtom,
                                       .leading_byte_offset = kChunkBytes, .stride_byte_offset = kAtom,
                                       .layout = UmmaLayout::Swizzle128B});
  }

  Task operator()(Warp& w) const {
    const WorkUnit& u = pr.units[w.cta_idx()];
    const std::uint32_t qb = u.qb, bh = u.b * pr.p.heads + u.h;
    const std::uint32_t kv_bh = u.b * pr.kv_heads + u.h / (pr.p.heads / pr.kv_heads);
    const std::uint32_t n = pr.kv_tiles(u);
    const PipelineTmaUmmaAsync kv(SmemAddr{0}, {.stages = l.stages, .transaction_bytes = l.stage_bytes(), .name = "kv"});
    const Role role = role_of(w.warp_idx());
    if (w.warp_idx() == 12) {
      kv.init(w);
      for (std::uint32_t which = 0; which < kBarriers; ++which)
        for (std::uint32_t i = 0; i < 2; ++i) {
          const std::uint32_t count = which == QFull || which == SFull || which == OFull ? 1 : 4;
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
      case Role::Load: co_await load(w, kv, qb, bh, kv_bh, n); break;
      case Role::Mma: co_await mma(w, kv, tmem, n); break;
      case Role::Softmax0:
      case Role::Softmax1: co_await softmax(w, role == Role::Softmax0 ? 0 : 1, tmem, u, n); break;
      case Role::Correction: co_await correction(w, tmem, n); break;
      case Role::Epilogue: co_await epilogue(w, qb, bh); break;
      case Role::Empty: w.set_role("Empty"); break;
    }
    co_await w.syncthreads();
    if (role == Role::Mma) w.tcgen05_dealloc(tmem, 512);
  }

  Task load(Warp& w, const PipelineTmaUmmaAsync& kv, std::uint32_t qb, std::uint32_t bh, std::uint32_t kv_bh,
            std::uint32_t n) const {
    w.set_role("Load");
    for (std::uint32_t i = 0; i < 2; ++i) {
      w.mbarrier_arrive_expect_tx(l.bar(QFull, i), l.q_bytes());
      for (std::uint32_t c = 0; c < l.chunks; ++c)
        w.tma_load(q_map, SmemAddr{l.q_tile(i).offset + c * kChunkBytes}, l.bar(QFull, i),
                   {static_cast<std::int32_t>(c * kChunk), static_cast<std::int32_t>(qb * 2 * kTileQ + i * kTileQ),
                    static_cast<std::int32_t>(bh)});
    }
    PipelineState st = make_producer_start_state(l.stages);
    for (std::uint32_t j = 0; j < n; ++j)
      for (const TensorMap* map : {&k_map, &v_map}) {  // K_j, then V_j, each in its own stage
        co_await kv.producer_acquire(w, st);
        for (std::uint32_t c = 0; c < l.chunks; ++c)
          w.tma_load(*map, SmemAddr{l.stage(st.index).offset + c * kChunkBytes}, kv.producer_get_barrier(st),
                     {static_cast<std::int32_t>(c * kChunk), static_cast<std::int32_t>(j * kTileK),
                      static_cast<std::int32_t>(kv_bh)});
        ++st;
      }
    co_await kv.producer_tail(w, st);
  }

  // The real kernel's order, which lets each softmax warpgroup work while the other's P V runs:
  // S0_0, S1_0, O0 += P0 V_0; then per tile j: S0_j, O1 += P1 V_{j-1}, S1_j, O0 += P0 V_j; then
  // O1 += P1 V_{n-1}. K_j and V_j take consecutive stages (loads 2j and 2j+1); V_j is released
  // after K_{j+1}, out of load order, which the per-stage empty barriers allow.
  Task mma(Warp& w, const PipelineTmaUmmaAsync& kv, TmemAddr tmem, std::uint32_t n) const {
    w.set_role("MMA");
    for (std::uint32_t i = 0; i < 2; ++i) co_await w.mbarrier_wait(l.bar(QFull, i), 0);
    auto stage = [&](std::uint32_t load) {  // the pipeline state of K/V load number `load`
      return PipelineState{l.stages, load % l.stages, (load / l.stages) & 1u, load};
    };
    auto s_mma = [&](std::uint32_t i, const PipelineState& k) {
      for (std::uint32_t kb = 0; kb < pr.p.headdim / 16; ++kb) {
        const std::uint32_t c = kb / 4, within = (kb % 4) * 32;
        w.tcgen05_mma(MmaKind::F16, tmem + kColS[i], k_major(SmemAddr{l.q_tile(i).offset + c * kChunkBytes}, within),
                      k_major(SmemAddr{l.stage(k.index).offset + c * kChunkBytes}, within), s_desc, kb > 0);
      }
      w.tcgen05_commit(l.bar(SFull, i));
    };
    // O_i += P_i V_j once P_i of tile j is in TMEM and (j > 0) correction rescaled O_i.
    auto pv_mma = [&](std::uint32_t i, std::uint32_t j, const PipelineState& v) -> Task {
      co_await w.mbarrier_wait(l.bar(PFull, i), j & 1u);
      if (j > 0) co_await w.mbarrier_wait(l.bar(OReady, i), (j - 1) & 1u);
      w.tcgen05_fence_after_thread_sync();
      for (std::uint32_t kb = 0; kb < kTileK / 16; ++kb)
        w.tcgen05_mma(MmaKind::F16, tmem + kColO[i], tmem + (kColS[i] + kPOffset + kb * 8),
                      v_operand(l.stage(v.index), kb * 16), pv_desc, j > 0 || kb > 0);
      w.tcgen05_commit(l.bar(OFull, i));
    };
    co_await kv.consumer_wait(w, stage(0));
    w.tcgen05_fence_after_thread_sync();
    s_mma(0, stage(0));
    s_mma(1, stage(0));
    kv.consumer_release(w, stage(0));
    co_await kv.consumer_wait(w, stage(1));
    co_await pv_mma(0, 0, stage(1));
    for (std::uint32_t j = 1; j < n; ++j) {
      co_await kv.consumer_wait(w, stage(2 * j));
      s_mma(0, stage(2 * j));
      co_await pv_mma(1, j - 1, stage(2 * j - 1));
      kv.consumer_release(w, stage(2 * j - 1));
      s_mma(1, stage(2 * j));
      kv.consumer_release(w, stage(2 * j));
      co_await kv.consumer_wait(w, stage(2 * j + 1));
      co_await pv_mma(0, j, stage(2 * j + 1));
    }
    co_await pv_mma(1, n - 1, stage(2 * n - 1));
    kv.consumer_release(w, stage(2 * n - 1));
  }

  // One row per thread (lane = row of the warp's quadrant): row max with masking, the
  // statistics to correction, P = exp2(S * scale_log2 - max * scale_log2) as bf16 into TMEM, the
  // running row sum; the final sum and max at the end.
  Task softmax(Warp& w, std::uint32_t i, TmemAddr tmem, const WorkUnit& u, std::uint32_t n) const {
    const std::uint32_t q = w.warp_idx() % 4;
    w.set_role(fmt::format("Softmax{} w{}", i, w.warp_idx() % 4));
    std::vector<std::uint32_t> s(32 * kTileK), pbits(32 * kTileK / 2);
    std::vector<float> m(32, kNegInf), sum(32, 0.0f), m_prev(32);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    for (std::uint32_t j = 0; j < n; ++j) {
      co_await w.mbarrier_wait(l.bar(SFull, i), j & 1u);
      w.tcgen05_fence_after_thread_sync();
      for (std::uint32_t c = 0; c < kTileK / 32; ++c)
        w.tcgen05_ld(lanes + (kColS[i] + 32 * c), TmemShape::S32x32b, 32,
                     std::span(s).subspan(c * 32 * 32, 32 * 32));
      co_await w.tcgen05_wait_ld();
      if (w.functional()) compute_p(i, q, u, j, s, m, m_prev, sum, pbits);
      // Instruction counts per thread (one row of 128 scores): 128 max (ALU), 128 FMA for
      // s*scale - max*scale, 128 ex2 (MUFU), 128 adds for the row sum (FMA), 64 packing
      // conversions (fp32 pairs -> bf16x2).
      const Warp::PipeWork row[] = {
          {CorePipe::Alu, kTileK}, {CorePipe::Fma, 2 * kTileK}, {CorePipe::Mufu, kTileK}, {CorePipe::Cvt, kTileK / 2}};
      w.execute(row);
      if (j > 0) co_await w.mbarrier_wait(l.bar(StatsEmpty, i), (j - 1) & 1u);
      write_stats(w, i, q, m_prev, m);
      w.mbarrier_arrive(l.bar(StatsFull, i));
      w.tcgen05_st(lanes + (kColS[i] + kPOffset), TmemShape::S32x32b, kTileK / 2, pbits);
      co_await w.tcgen05_wait_st();
      w.tcgen05_fence_before_thread_sync();
      w.mbarrier_arrive(l.bar(PFull, i));
    }
    co_await w.mbarrier_wait(l.bar(StatsEmpty, i), (n - 1) & 1u);  // correction read the last maxima
    write_stats(w, i, q, sum, m);
    w.mbarrier_arrive(l.bar(SumFull, i));
  }

  // The warp's 32 rows of both statistics fields (one st.shared each: a float per lane).
  void write_stats(Warp& w, std::uint32_t i, std::uint32_t q, const std::vector<float>& field0,
                   const std::vector<float>& m) const {
    w.st_shared(l.stat(i, 0, 32 * q), std::as_bytes(std::span(field0)));
    w.st_shared(l.stat(i, 1, 32 * q), std::as_bytes(std::span(m)));
  }

  void compute_p(std::uint32_t i, std::uint32_t q, const WorkUnit& u, std::uint32_t j, const std::vector<std::uint32_t>& s,
                 std::vector<float>& m, std::vector<float>& m_prev, std::vector<float>& sum,
                 std::vector<std::uint32_t>& pbits) const {
    const std::uint32_t row0 = u.qb * 2 * kTileQ + i * kTileQ + 32 * q, len = pr.lens[u.b];
    for (std::uint32_t r = 0; r < 32; ++r) {
      const std::uint32_t query = row0 + r;
      auto score = [&](std::uint32_t k) {  // column k of row r: regs[lane * 32 + reg] of chunk k / 32
        const std::uint32_t key = j * kTileK + k;
        if (key >= len || (pr.p.causal && key > query)) return kNegInf;
        return std::bit_cast<float>(s[(k / 32) * 32 * 32 + r * 32 + k % 32]);
      };
      float mx = m[r];
      for (std::uint32_t k = 0; k < kTileK; ++k) mx = std::max(mx, score(k));
      m_prev[r] = m[r];
      m[r] = mx;
      const float base = mx == kNegInf ? 0.0f : mx * pr.scale_log2;
      const float alpha = m_prev[r] == kNegInf ? 0.0f : std::exp2(m_prev[r] * pr.scale_log2 - base);
      float add = 0;
      for (std::uint32_t k = 0; k < kTileK; k += 2) {
        std::uint32_t packed = 0;
        for (std::uint32_t h = 0; h < 2; ++h) {
          const float sc = score(k + h);
          const float p = sc == kNegInf ? 0.0f : std::exp2(sc * pr.scale_log2 - base);
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
  // P V of tile j-1 and that of tile j; at the end, O_i / row sum to SMEM for the epilogue.
  Task correction(Warp& w, TmemAddr tmem, std::uint32_t n) const {
    const std::uint32_t q = w.warp_idx() % 4, d = pr.p.headdim;
    w.set_role(fmt::format("Correction w{}", q));
    std::vector<std::uint32_t> o(32 * d);
    const TmemAddr lanes = TmemAddr::at(32 * q, tmem.column());
    for (std::uint32_t j = 0; j < n; ++j)
      for (std::uint32_t i = 0; i < 2; ++i) {
        co_await w.mbarrier_wait(l.bar(StatsFull, i), j & 1u);
        std::vector<float> scale(32, 1.0f), m_old(32), m_new(32);
        w.ld_shared(l.stat(i, 0, 32 * q), std::as_writable_bytes(std::span(m_old)));
        w.ld_shared(l.stat(i, 1, 32 * q), std::as_writable_bytes(std::span(m_new)));
        bool grew = false;
        for (std::uint32_t r = 0; r < 32; ++r)
          if (m_old[r] != m_new[r] && m_old[r] != kNegInf) {
            scale[r] = std::exp2((m_old[r] - m_new[r]) * pr.scale_log2);
            grew = true;
          }
        w.mbarrier_arrive(l.bar(StatsEmpty, i));
        if (j == 0) continue;  // nothing accumulated yet
        co_await w.mbarrier_wait(l.bar(OFull, i), (j - 1) & 1u);
        w.tcgen05_fence_after_thread_sync();
        // Timing mode has no scores: a warp rescales as often as i.i.d. scores make one of its 32
        // rows' maxima grow at tile j, 1 - (j / (j + 1))^32, drawn deterministically.
        if (w.functional() ? grew : timing_rescale(w.cta_idx(), w.warp_idx(), i, j)) {
          ++*rescales;
          w.tcgen05_ld(lanes + kColO[i], TmemShape::S32x32b, d, o);
          co_await w.tcgen05_wait_ld();
          if (w.functional())
            for (std::uint32_t r = 0; r < 32; ++r)
              for (std::uint32_t c = 0; c < d; ++c)
                o[r * d + c] = std::bit_cast<std::uint32_t>(std::bit_cast<float>(o[r * d + c]) * scale[r]);
          const Warp::PipeWork rescale[] = {{CorePipe::Mufu, 1}, {CorePipe::Fma, d}};
          w.execute(rescale);
          w.tcgen05_st(lanes + kColO[i], TmemShape::S32x32b, d, o);
          co_await w.tcgen05_wait_st();
        }
        w.tcgen05_fence_before_thread_sync();
        w.mbarrier_arrive(l.bar(OReady, i));
      }
    std::vector<std::byte> row_bytes(32 * kChunk * 2);
    std::vector<float> total(32);
    for (std::uint32_t i = 0; i < 2; ++i) {
      co_await w.mbarrier_wait(l.bar(SumFull, i), 0);
      w.ld_shared(l.stat(i, 0, 32 * q), std::as_writable_bytes(std::span(total)));
      co_await w.mbarrier_wait(l.bar(OFull, i), (n - 1) & 1u);
      w.tcgen05_fence_after_thread_sync();
      w.tcgen05_ld(lanes + kColO[i], TmemShape::S32x32b, d, o);
      co_await w.tcgen05_wait_ld();
      const Warp::PipeWork normalize[] = {{CorePipe::Mufu, 1}, {CorePipe::Fma, d}, {CorePipe::Cvt, d / 2}};  // 1 / sum
      w.execute(normalize);
      for (std::uint32_t c = 0; c < l.chunks; ++c) {
        if (w.functional())
          for (std::uint32_t r = 0; r < 32; ++r) {
            for (std::uint32_t e = 0; e < kChunk; ++e) {
              const float v = total[r] > 0 ? std::bit_cast<float>(o[r * d + c * kChunk + e]) / total[r] : 0.0f;
              store_from_float(pr.p.dtype, v, &row_bytes[(r * kChunk + e) * 2]);
            }
          }
        w.st_shared(l.o_box(i, q, c), row_bytes);
      }
      w.fence_proxy_async();
      w.mbarrier_arrive(l.bar(EpiFull, i));
    }
  }

  static bool timing_rescale(std::uint32_t cta, std::uint32_t warp, std::uint32_t i, std::uint32_t j) {
    const std::uint64_t h = mix64((static_cast<std::uint64_t>(cta) << 32) ^ (warp << 20) ^ (i << 19) ^ j);
    const double p = 1.0 - std::pow(static_cast<double>(j) / (j + 1), 32.0);
    return static_cast<double>(h >> 11) * 0x1.0p-53 < p;
  }

  Task epilogue(Warp& w, std::uint32_t qb, std::uint32_t bh) const {
    w.set_role("Epilogue");
    for (std::uint32_t i = 0; i < 2; ++i) {
      co_await w.mbarrier_wait(l.bar(EpiFull, i), 0);
      for (std::uint32_t q = 0; q < 4; ++q)
        for (std::uint32_t c = 0; c < l.chunks; ++c)
          w.tma_store(o_map, l.o_box(i, q, c),
                      {static_cast<std::int32_t>(c * kChunk),
                       static_cast<std::int32_t>(qb * 2 * kTileQ + i * kTileQ + 32 * q), static_cast<std::int32_t>(bh)});
      w.bulk_commit_group();
    }
    co_await w.bulk_wait_group(0);
  }
};

void validate(const HardwareConfig& config, const FmhaParams& p) {
  if (config.tmem.columns < 512)
    throw InputError(fmt::format("the {} config has {} TMEM columns; fmha needs 512 (a Blackwell config such as "
                                 "sim_configs/b200.yaml)",
                                 config.name, config.tmem.columns));
  if (p.headdim != 64 && p.headdim != 128)
    throw InputError(fmt::format("--headdim {}: the kernel supports head dims 64 and 128", p.headdim));
  if (p.dtype != DataType::BF16 && p.dtype != DataType::F16)
    throw InputError(fmt::format("--dtype {}: Q, K, V are bf16 or f16", name_of(p.dtype)));
  if (p.batch == 0 || p.heads == 0) throw InputError("--batch and --heads must be at least 1");
  if (p.seqlen == 0) throw InputError("--seqlen 0: a sequence needs at least one token");
  if (!p.seqlens.empty() && p.seqlens.size() != p.batch)
    throw InputError(fmt::format("{} sequence lengths for a batch of {}", p.seqlens.size(), p.batch));
  for (std::uint32_t len : p.seqlens)
    if (len == 0 || len > p.seqlen)
      throw InputError(fmt::format("--seqlens: a length of {}; each must be in 1..{} (the padded length)", len, p.seqlen));
  const std::uint64_t ctas = static_cast<std::uint64_t>(p.batch) * p.heads * ((p.seqlen + 2 * kTileQ - 1) / (2 * kTileQ));
  if (ctas >= (1ull << 31))
    throw InputError(fmt::format("batch {} x {} heads x seqlen {}: {} CTAs, more than a grid can have", p.batch, p.heads,
                                 p.seqlen, ctas));
  const std::uint32_t kvh = p.kv_heads ? p.kv_heads : p.heads;
  if (p.heads % kvh != 0)
    throw InputError(fmt::format("--kv-heads {}: the {} query heads must split evenly over the K/V heads", kvh, p.heads));
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

FmhaResult run_fmha(const HardwareConfig& config, const SimOptions& options, const FmhaParams& p, bool check) {
  validate(config, p);
  const std::uint32_t kvh = p.kv_heads ? p.kv_heads : p.heads, d = p.headdim;
  const Problem pr(p, kvh, static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)) * 1.4426950408889634));
  Simulator sim(config, options);
  const std::uint64_t row = d * 2ull;
  const std::uint64_t q_bytes = row * p.seqlen * p.batch * p.heads, kv_bytes = row * p.seqlen * p.batch * kvh;
  const GmemAddr qa = sim.gmem().alloc(q_bytes), ka = sim.gmem().alloc(kv_bytes), va = sim.gmem().alloc(kv_bytes),
                 oa = sim.gmem().alloc(q_bytes);
  auto map = [&](GmemAddr a, std::uint32_t heads, std::uint32_t box_rows, Swizzle sw) {
    return TensorMap::tiled({.dtype = p.dtype, .address = a, .dims = {d, p.seqlen, static_cast<std::uint64_t>(p.batch) * heads},
                             .strides = {row, row * p.seqlen}, .box = {kChunk, box_rows, 1}, .swizzle = sw});
  };
  const TensorMap q_map = map(qa, p.heads, kTileQ, Swizzle::B128), k_map = map(ka, kvh, kTileK, Swizzle::B128),
                  v_map = map(va, kvh, kTileK, Swizzle::B128), o_map = map(oa, p.heads, 32, Swizzle::None);
  if (sim.gmem().holds_data()) {
    fill(sim.gmem().bytes(qa, q_bytes), p.dtype, 11, 2.0f);
    fill(sim.gmem().bytes(ka, kv_bytes), p.dtype, 12, 2.0f);
    fill(sim.gmem().bytes(va, kv_bytes), p.dtype, 13, 1.0f);
  }
  Layout l;
  l.chunks = d / kChunk;
  l.named = PipelineBarriers::smem_bytes(16);  // after the K/V pipeline's barriers (16 stages at most)
  l.tmem_slot = l.named + 16 * kBarriers;
  l.kv = align_up(l.q + 2 * l.q_bytes(), kAtom);
  if (config.sm.max_smem_per_cta < l.kv + 2 * l.stage_bytes())
    throw InputError(fmt::format("head dim {}: Q tiles and two K/V stages need {} bytes of SMEM; the {} config allows {} "
                                 "per CTA",
                                 d, l.kv + 2 * l.stage_bytes(), config.name, config.sm.max_smem_per_cta));
  const std::uint32_t fit = (config.sm.max_smem_per_cta - l.kv) / l.stage_bytes();
  l.stages = p.stages ? p.stages : std::min(16u, fit);
  if (l.stages < 2 || l.stages > 16 || l.stages > fit)
    throw InputError(fmt::format("--stages {}: 2..{} K/V stages of {} bytes fit the {} bytes a CTA may have", l.stages,
                                 std::min(16u, fit), l.stage_bytes(), config.sm.max_smem_per_cta));
  l.smem = l.kv + l.stages * l.stage_bytes();
  FmhaResult r;
  const Kernel kernel{pr, q_map, k_map, v_map, o_map, l,
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype, .m = kTileQ, .n = kTileK}),
                      encode(MmaKind::F16, InstrDescriptorFields{.a_type = p.dtype, .b_type = p.dtype,
                                                                 .b_major = Major::MN, .m = kTileQ, .n = d}),
                      &r.rescales};
  r.stages = l.stages;
  r.ctas = static_cast<std::uint32_t>(pr.units.size());
  r.run = sim.launch("fmha",
                     LaunchConfig{.grid_ctas = r.ctas, .block_threads = 512, .dynamic_smem_bytes = l.smem,
                                  .registers_per_thread = 128},
                     [&kernel](Warp& w) { return kernel(w); });
  for (std::uint32_t len : pr.lens) r.flops += 4.0 * p.heads * len * static_cast<double>(len) * d * (p.causal ? 0.5 : 1.0);

  if (check && sim.gmem().holds_data()) {
    auto floats = [&](GmemAddr base, std::uint64_t bytes) {
      const auto src = sim.gmem().bytes(base, bytes);
      std::vector<float> out(bytes / 2);
      for (std::size_t e = 0; e < out.size(); ++e) out[e] = load_as_float(p.dtype, &src[2 * e]);
      return out;
    };
    const std::vector<float> qf = floats(qa, q_bytes), kf = floats(ka, kv_bytes), vf = floats(va, kv_bytes),
                             of = floats(oa, q_bytes);
    auto at = [&](const std::vector<float>& t, std::uint32_t bh, std::uint32_t tok, std::uint32_t c) {
      return t[(static_cast<std::size_t>(bh) * p.seqlen + tok) * d + c];
    };
    r.checked = true;
    r.matches = true;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d)), u = std::ldexp(1.0, -8);
    std::vector<double> w(p.seqlen);
    for (std::uint32_t bh = 0; bh < p.batch * p.heads && r.matches; ++bh) {
      const std::uint32_t kb = bh / p.heads * kvh + bh % p.heads / (p.heads / kvh);
      const std::uint32_t len = pr.lens[bh / p.heads];
      for (std::uint32_t t = 0; t < len && r.matches; ++t) {
        const std::uint32_t keys = p.causal ? t + 1 : len;
        double mx = -1e300;
        for (std::uint32_t k = 0; k < keys; ++k) {
          double dot = 0;
          for (std::uint32_t c = 0; c < d; ++c) dot += static_cast<double>(at(qf, bh, t, c)) * at(kf, kb, k, c);
          w[k] = dot * scale;
          mx = std::max(mx, w[k]);
        }
        double total = 0;
        for (std::uint32_t k = 0; k < keys; ++k) total += (w[k] = std::exp(w[k] - mx));
        for (std::uint32_t c = 0; c < d && r.matches; ++c) {
          double ref = 0, mag = 0;
          for (std::uint32_t k = 0; k < keys; ++k) {
            const double v = at(vf, kb, k, c);
            ref += w[k] * v;
            mag += w[k] * std::fabs(v);
          }
          ref /= total;
          // P is rounded to the element type before P V (2^-8 relative for bf16, per term), O once
          // more when stored; fp32 sums and exp2 add far less.
          const double bound = 2 * u * mag / total + u * std::fabs(ref) + 1e-6;
          const double got = at(of, bh, t, c), err = std::fabs(got - ref);
          r.max_error = std::max(r.max_error, err);
          if (!(err <= bound)) {
            r.matches = false;
            r.detail = fmt::format("O[batch {}][head {}][token {}][{}] = {} but the reference is {} (error {:.3g} > "
                                   "bound {:.3g})",
                                   bh / p.heads, bh % p.heads, t, c, got, ref, err, bound);
          }
        }
      }
    }
    if (r.matches)
      r.detail = fmt::format("O matches the fp64 softmax reference within 2^-7 sum(p|v|)/sum(p) + 2^-8|O| (max error {:.3g})",
                             r.max_error);
  }
  return r;
}

namespace {
KernelReport run_from_cli(const KernelRequest& req) {
  const KernelArgs& a = req.args;
  FmhaParams p;
  p.batch = static_cast<std::uint32_t>(a.integer("batch", 0, 1u << 16));
  p.heads = static_cast<std::uint32_t>(a.integer("heads", 0, 1024));
  p.kv_heads = static_cast<std::uint32_t>(a.integer("kv-heads", 0, 1024));
  p.seqlen = static_cast<std::uint32_t>(a.integer("seqlen", 0, 1u << 20));
  p.headdim = static_cast<std::uint32_t>(a.integer("headdim", 1, 1024));
  const auto t = parse_data_type(a.text("dtype"));
  if (!t) throw InputError(fmt::format("--dtype: unknown type '{}'", a.text("dtype")));
  p.dtype = *t;
  const std::string& causal = a.text("causal");
  if (causal != "0" && causal != "1") throw InputError(fmt::format("--causal: 0 or 1, got '{}'", causal));
  p.causal = causal == "1";
  p.stages = static_cast<std::uint32_t>(a.integer("stages", 0, 16));
  if (!a.text("seqlens").empty()) {
    std::string list = a.text("seqlens");
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      p.seqlens.push_back(static_cast<std::uint32_t>(
          parse_integer(list.substr(at, comma - at), "each length of --seqlens (e.g. 100,700,1000)", 1, 1u << 20)));
      at = comma + 1;
    }
    p.batch = static_cast<std::uint32_t>(p.seqlens.size());
    p.seqlen = *std::max_element(p.seqlens.begin(), p.seqlens.end());
  }
  const FmhaResult r = run_fmha(req.config, req.options, p, req.check);
  KernelReport rep;
  rep.kernel = "fmha";
  rep.problem = fmt::format("O = softmax(Q K^T / sqrt(d)) V{}, batch {} x {} heads ({} K/V heads), seqlen {}{}, head dim {}, "
                            "{}, {} K/V stages, {} CTAs",
                            p.causal ? " causal" : "", p.batch, p.heads, p.kv_heads ? p.kv_heads : p.heads, p.seqlen,
                            p.seqlens.empty() ? "" : fmt::format(" (lengths {})", a.text("seqlens")), p.headdim, name_of(p.dtype), r.stages, r.ctas);
  rep.run = r.run;
  rep.checked = r.checked;
  rep.check_passed = r.matches;
  rep.check_detail = r.checked ? r.detail : "not checked";
  const double seconds = static_cast<double>(r.run.cycles) / (req.config.clock_ghz * 1e9);
  rep.figures = {{"tflops", seconds > 0 ? r.flops / seconds / 1e12 : 0.0},
                 {"flops", r.flops},
                 {"tensor_busy_fraction", r.run.mma_busy_fraction()},
                 {"mufu_busy_fraction", CorePipeStats::busy_fraction(r.run.pipes.mufu_busy_cycles, r.run.context())},
                 {"stages", r.stages}};
  return rep;
}
}  // namespace

KernelInfo fmha_kernel_info() {
  return KernelInfo{"fmha",
                    "Fused multi-head attention forward in CUTLASS's SM100 structure: 2 softmax warpgroups, correction, "
                    "MMA, load and epilogue warps, S/P/O in TMEM, online softmax",
                    {{"batch", "sequences", "2"},
                     {"heads", "query heads", "4"},
                     {"kv-heads", "K/V heads (GQA/MQA); 0: as many as query heads", "0"},
                     {"seqlen", "tokens per sequence (queries and keys)", "1000"},
                     {"seqlens", "variable lengths, one per sequence (sets the batch), e.g. 100,700,1000", ""},
                     {"headdim", "64 or 128", "128"},
                     {"dtype", "bf16 or f16", "bf16"},
                     {"causal", "1: causal mask (tiles above the diagonal skipped)", "0"},
                     {"stages", "K/V SMEM stages; 0: as many as fit", "0"}},
                    &run_from_cli};
}

}  // namespace bwsim
