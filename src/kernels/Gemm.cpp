#include "bwsim/kernels/Gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/sm/Gpu.hpp"
#include "bwsim/kernel/Pipeline.hpp"
#include "bwsim/kernels/GemmFormat.hpp"
#include "bwsim/kernels/GemmReference.hpp"
#include "bwsim/hw/tensor/sm100/MmaPipe.hpp"

namespace bwsim {

namespace {
constexpr std::array<std::pair<GemmBug, const char*>, 30> kBugNames{{
    {GemmBug::None, "none"},
    {GemmBug::NoZeroInit, "no-zero-init"},
    {GemmBug::SkipKBlock, "skip-kblock"},
    {GemmBug::WrongProducerPhase, "wrong-producer-phase"},
    {GemmBug::MissingExpectTx, "missing-expect-tx"},
    {GemmBug::WrongTxBytes, "wrong-tx-bytes"},
    {GemmBug::ReleaseBeforeCommit, "release-before-commit"},
    {GemmBug::NoPhaseFlip, "no-phase-flip"},
    {GemmBug::McastMaskMissing, "mcast-mask-missing"},
    {GemmBug::EarlyEpilogueRead, "early-epilogue-read"},
    {GemmBug::EarlyDealloc, "early-dealloc"},
    {GemmBug::SameQuadrant, "same-quadrant"},
    {GemmBug::UseBeforeWaitLd, "use-before-wait-ld"},
    {GemmBug::StageCountOffByOne, "stage-count-off-by-one"},
    {GemmBug::NoProducerTail, "no-producer-tail"},
    {GemmBug::NoClusterExitSync, "no-cluster-exit-sync"},
    {GemmBug::NoFenceMbarrierInit, "no-fence-mbarrier-init"},
    {GemmBug::ReinitLiveBarrier, "reinit-live-barrier"},
    {GemmBug::AccumulatorArrivalsShort, "accumulator-arrivals-short"},
    {GemmBug::AccumulatorArrivalsLong, "accumulator-arrivals-long"},
    {GemmBug::AccStageNotAdvanced, "acc-stage-not-advanced"},
    {GemmBug::EarlyAccumulatorRelease, "early-accumulator-release"},
    {GemmBug::MissingProxyFence, "missing-proxy-fence"},
    {GemmBug::StagingBufferReuse, "staging-buffer-reuse"},
    {GemmBug::CommitMaskMissesPeer, "commit-mask-misses-peer"},
    {GemmBug::PairLoadsOwnBarrier, "pair-loads-own-barrier"},
    {GemmBug::ReuseStageEarly, "reuse-stage-early"},
    {GemmBug::NoRelinquish, "no-relinquish"},
    {GemmBug::NoFinalStoreWait, "no-final-store-wait"},
    {GemmBug::ReleaseBeforeEpilogueSync, "release-before-epilogue-sync"},
}};
}  // namespace

const char* name_of(GemmBug bug) {
  for (const auto& [b, n] : kBugNames)
    if (b == bug) return n;
  return "?";
}

std::optional<GemmBug> parse_gemm_bug(std::string_view name) {
  for (const auto& [b, n] : kBugNames)
    if (name == n) return b;
  return std::nullopt;
}

namespace {

constexpr std::uint32_t kAtom = 1024;          // 128B-swizzle atom: 8 rows x 128 bytes
constexpr std::uint32_t kRowBytes = 128;       // one k-tile row: the 128B swizzle span
constexpr std::uint32_t kMmaKBytes = 32;       // K of one tcgen05.mma, in bytes of input
constexpr std::uint32_t kKBlocks = kRowBytes / kMmaKBytes;
constexpr std::uint32_t kEpilogueCols = 32;    // columns per tcgen05.ld / TMA store chunk
constexpr std::uint32_t kEpilogueWarps = 4;
constexpr std::uint32_t kTileM = 128;          // MMA M: one accumulator row per TMEM lane
constexpr std::uint32_t kSfAtom = 512;         // one 128-row x 4-factor scale-factor atom (GemmReference.hpp)

// Elements of K in one 128-byte k-tile row of SMEM.
std::uint32_t gemm_tile_k(const GemmFormat& fmt) { return kRowBytes * 8 / fmt.smem_bits(); }

// The scale-factor atoms of one k-tile of a block-scaled format: `atoms` along K, for A's 128 rows
// and for `blocks` 128-column blocks of B (tile_n / 128); none for the unscaled formats.
struct ScaleTiles {
  std::uint32_t atoms = 0, blocks = 0;
  std::uint32_t a_bytes() const { return atoms * kSfAtom; }
  std::uint32_t b_bytes() const { return atoms * blocks * kSfAtom; }
  std::uint32_t tmem_columns() const { return 4 * atoms * (1 + blocks); }  // 4 per atom (32x128b.warpx4)
};

struct Layout {
  std::uint32_t main_barriers = 0, acc_barriers = 0, tmem_slot = 0;
  std::uint32_t staging = 0, staging_bytes = 0;  // per warp and buffer
  std::uint32_t stages_base = 0, a_bytes = 0, b_bytes = 0, stage_bytes = 0, stages = 0, acc_stages = 2;
  ScaleTiles sf;
  std::uint32_t smem_bytes = 0;

  SmemAddr a(std::uint32_t s) const { return SmemAddr{stages_base + s * stage_bytes}; }
  SmemAddr b(std::uint32_t s) const { return SmemAddr{stages_base + s * stage_bytes + a_bytes}; }
  SmemAddr sf_a(std::uint32_t s) const { return b(s) + b_bytes; }
  SmemAddr sf_b(std::uint32_t s) const { return sf_a(s) + sf.a_bytes(); }
  SmemAddr buffer(std::uint32_t quadrant, std::uint32_t i) const {
    return SmemAddr{staging + (quadrant * 2 + i) * staging_bytes};
  }
};

// `b_rows`: the rows of B one CTA holds per stage (tile_n, or tile_n / 2 on a CTA pair); each stage
// also holds the k-tile's scale-factor atoms, and stays 1024-byte aligned (the swizzle atom).
Layout make_layout(const GemmParams& p, std::uint32_t b_rows, ScaleTiles sf, std::uint32_t acc_stages,
                   std::uint32_t max_smem) {
  Layout l;
  l.sf = sf;
  l.acc_stages = acc_stages;
  l.a_bytes = kTileM * kRowBytes;
  l.b_bytes = b_rows * kRowBytes;
  l.stage_bytes = align_up(l.a_bytes + l.b_bytes + sf.a_bytes() + sf.b_bytes(), kAtom);
  const std::uint32_t max_stages = 16;
  auto fill = [&](std::uint32_t stages) {
    l.stages = stages;
    l.main_barriers = 0;
    l.acc_barriers = PipelineBarriers::smem_bytes(stages);
    l.tmem_slot = l.acc_barriers + PipelineBarriers::smem_bytes(acc_stages);
    l.staging = align_up(l.tmem_slot + 8, 128);
    l.staging_bytes = kEpilogueCols * kEpilogueCols * size_of(p.d_type);
    l.stages_base = align_up(l.staging + kEpilogueWarps * 2 * l.staging_bytes, kAtom);
    l.smem_bytes = l.stages_base + stages * l.stage_bytes;
  };
  if (p.stages) {
    fill(p.stages);
    return l;
  }
  std::uint32_t s = 1;
  while (s < max_stages) {
    fill(s + 1);
    if (l.smem_bytes > max_smem) break;
    ++s;
  }
  fill(s);
  return l;
}

// The cluster's geometry. The cluster is cl_m x cl_n CTAs (x along M, y along N); each CTA owns
// a 128 x tile_n block of the cluster tile (128*cl_m) x (tile_n*cl_n). With pair = 2, CTAs 2i and
// 2i+1 along x form one 256 x tile_n MMA (cta_group::2), each holding its 128 rows of A and half
// the tile's B rows. Operands are multicast as in CUTLASS: the A block of row x is split into cl_n
// pieces, piece y loaded by CTA (x, y) into every CTA of row x; the B half h of column y is split
// over the cl_m / pair MMA units, piece u loaded by CTA (pair*u + h, y) into every CTA of column
// y holding half h.
struct ClusterGeometry {
  std::uint32_t cl_m = 1, cl_n = 1, pair = 1;
  std::uint32_t units_m() const { return cl_m / pair; }
  std::uint32_t size() const { return cl_m * cl_n; }
  std::uint32_t rank(std::uint32_t x, std::uint32_t y) const { return x + y * cl_m; }
  std::uint32_t a_piece_rows() const { return kTileM / cl_n; }
  std::uint32_t b_rows(std::uint32_t tile_n) const { return tile_n / pair; }  // per CTA
  std::uint32_t b_piece_rows(std::uint32_t tile_n) const { return b_rows(tile_n) / units_m(); }
  // The CTAs CTA (x, y)'s A piece lands in: row x.
  std::uint16_t a_mask(std::uint32_t x) const {
    std::uint16_t m = 0;
    for (std::uint32_t y = 0; y < cl_n; ++y) m |= static_cast<std::uint16_t>(1u << rank(x, y));
    return m;
  }
  // The CTAs CTA (x, y)'s B piece lands in: column y, the same half.
  std::uint16_t b_mask(std::uint32_t x, std::uint32_t y) const {
    std::uint16_t m = 0;
    for (std::uint32_t xx = x % pair; xx < cl_m; xx += pair) m |= static_cast<std::uint16_t>(1u << rank(xx, y));
    return m;
  }
  // The CTAs whose producers fill the stage the MMA of unit (x / pair, y) reads: the unit's rows
  // (A) and column y (B). Its commit releases their stages.
  std::uint16_t release_mask(std::uint32_t x, std::uint32_t y) const {
    std::uint16_t m = 0;
    for (std::uint32_t xx = x - x % pair; xx < x - x % pair + pair; ++xx) m |= a_mask(xx);
    for (std::uint32_t xx = 0; xx < cl_m; ++xx) m |= static_cast<std::uint16_t>(1u << rank(xx, y));
    return m;
  }
  // MMAs that read what one producer multicasts: the cl_n units of its row, the units_m of its
  // column, the shared one counted once.
  std::uint32_t stage_consumers() const { return cl_n + units_m() - 1; }
};

struct Kernel {
  const GemmParams& p;
  const GemmFormat& fmt;
  const TensorMap& a_map;  // box: an A piece
  const TensorMap& b_map;  // box: a B piece
  const TensorMap& d_map;
  const TensorMap* sfa_map;  // block-scaled: a k-tile's atoms of 128 rows of A, of tile_n columns of B
  const TensorMap* sfb_map;
  Layout layout;
  ClusterGeometry g;
  const TileScheduler& scheduler;  // over the cluster tiles, a cluster its worker
  std::uint32_t k_tiles, tmem_columns;
  std::array<InstrDescriptor, kKBlocks> idesc;  // per K block: the scale-factor IDs differ

  std::uint32_t tiles() const { return scheduler.tiles(); }
  // The k-th cluster tile of w's cluster (tiles() when it has no more).
  std::uint32_t unit(const Warp& w, std::uint32_t k) const {
    return scheduler.work_unit(w.cluster_idx(), w.num_clusters(), k);
  }
  // The first row / column of CTA (x, y)'s block of cluster tile t.
  std::int32_t m0(std::uint32_t t, std::uint32_t x) const {
    return static_cast<std::int32_t>((scheduler.tile(t).first * g.cl_m + x) * kTileM);
  }
  std::int32_t n0(std::uint32_t t, std::uint32_t y) const {
    return static_cast<std::int32_t>((scheduler.tile(t).second * g.cl_n + y) * p.tile_n);
  }

  SmemDescriptor operand(SmemAddr tile, std::uint32_t kb) const {
    // K-major, 128B swizzle: rows 128 B apart inside an 8-row atom, atoms SBO = 1024 B apart; the
    // k-block's 32 bytes start 32*kb into the row (the swizzle acts on the absolute address).
    return encode(SmemDescriptorFields{.start_address = tile.offset + kb * kMmaKBytes,
                                       .leading_byte_offset = 16,
                                       .stride_byte_offset = kAtom,
                                       .layout = UmmaLayout::Swizzle128B});
  }

  Task operator()(Warp& w) const {
    const auto coord = w.cluster_cta_coord();
    const std::uint32_t x = coord[0], y = coord[1];
    const bool leader = x % g.pair == 0;  // issues the MMAs of its unit
    const std::uint32_t b_rows = g.b_rows(p.tile_n);
    const std::uint32_t tx_bytes = g.pair * (layout.a_bytes + layout.sf.a_bytes() + layout.sf.b_bytes()) +
                                   (p.bug == GemmBug::WrongTxBytes ? 0 : p.tile_n * kRowBytes);
    const PipelineTmaUmmaAsync mainloop(
        SmemAddr{layout.main_barriers},
        {.stages = layout.stages,
         .transaction_bytes = tx_bytes,
         .name = "mainloop",
         .consumers = g.stage_consumers(),
         .release_mask = g.release_mask(x, y),
         .arms_full = leader && p.bug != GemmBug::MissingExpectTx});
    const std::uint32_t leader_rank = w.cluster_ctarank() - x % g.pair;
    const PipelineUmmaAsync accum(
        SmemAddr{layout.acc_barriers},
        {.stages = layout.acc_stages,
         .consumer_warps = g.pair * (p.bug == GemmBug::ReleaseBeforeEpilogueSync ? 1 : kEpilogueWarps) +
                           (p.bug == GemmBug::AccumulatorArrivalsLong ? 1 : 0) -
                           (p.bug == GemmBug::AccumulatorArrivalsShort ? 1 : 0),
         .name = "accum",
         .commit_mask = g.pair == 2 ? static_cast<std::uint16_t>((p.bug == GemmBug::CommitMaskMissesPeer ? 1u : 3u)
                                                                 << leader_rank)
                                    : std::uint16_t{0},
         .release_rank = static_cast<std::int32_t>(leader_rank)});
    const SmemAddr tmem_slot{layout.tmem_slot};
    if (w.warp_idx() == 0) {
      mainloop.init(w);
      accum.init(w);
      if (p.bug != GemmBug::NoFenceMbarrierInit) w.fence_mbarrier_init();
    } else if (w.warp_idx() == 1) {
      co_await w.tcgen05_alloc(tmem_slot, tmem_columns, g.pair);
      if (p.bug != GemmBug::NoRelinquish) w.tcgen05_relinquish_alloc_permit();
    }
    // Every CTA's barriers initialised before any peer signals them (the mutant: CUTLASS's relaxed
    // arrive, which needs the fence it left out).
    co_await cluster_sync(w, p.bug == GemmBug::NoFenceMbarrierInit);
    const TmemAddr tmem{w.ld_shared_u32(tmem_slot)};

    if (w.warp_idx() == 0) {
      w.set_role("TMA producer");
      const std::uint32_t a_piece = g.a_piece_rows(), b_piece = g.b_piece_rows(p.tile_n);
      std::uint16_t a_mask = g.a_mask(x);
      if (p.bug == GemmBug::McastMaskMissing) a_mask &= static_cast<std::uint16_t>(~(1u << g.rank(x, g.cl_n - 1)));
      const TmaLoadFlags a_flags{.multicast_mask = a_mask, .cta_group_2 = g.pair == 2};
      const TmaLoadFlags b_flags{.multicast_mask = g.b_mask(x, y),
                                 .cta_group_2 = g.pair == 2 && p.bug != GemmBug::PairLoadsOwnBarrier};
      PipelineState st = p.bug == GemmBug::WrongProducerPhase ? make_consumer_start_state(layout.stages)
                                                               : make_producer_start_state(layout.stages);
      for (std::uint32_t i = 0, t = unit(w, 0); t < tiles(); t = unit(w, ++i))
        for (std::uint32_t kt = 0; kt < k_tiles; ++kt, ++st) {
          if (p.bug == GemmBug::ReuseStageEarly && st.count == layout.stages) {  // the first refill: no wait
            if (leader) w.mbarrier_arrive_expect_tx(mainloop.producer_get_barrier(st), tx_bytes);
          } else {
            co_await mainloop.producer_acquire(w, st);
          }
          if (p.bug == GemmBug::ReinitLiveBarrier && i == 1 && kt == 0) w.mbarrier_init(mainloop.full(0), 1);
          if (p.bug == GemmBug::MissingExpectTx && leader) w.mbarrier_arrive(mainloop.producer_get_barrier(st));
          const auto k0 = static_cast<std::int32_t>(kt * a_map.box(0));
          const MBarrierRef full = mainloop.producer_get_barrier(st);
          w.tma_load(a_map, layout.a(st.index) + y * a_piece * kRowBytes, full,
                     {k0, m0(t, x) + static_cast<std::int32_t>(y * a_piece)}, a_flags);
          const std::uint32_t u = x / g.pair, half = x % g.pair;
          w.tma_load(b_map, layout.b(st.index) + u * b_piece * kRowBytes, full,
                     {k0, n0(t, y) + static_cast<std::int32_t>(half * b_rows + u * b_piece)}, b_flags);
          if (sfa_map) {  // each CTA its own rows' factors and all of the tile's B factors
            const auto atom0 = static_cast<std::int32_t>(kt * layout.sf.atoms);
            const TmaLoadFlags own{.cta_group_2 = g.pair == 2};
            w.tma_load(*sfa_map, layout.sf_a(st.index), full, {0, atom0, m0(t, x) / static_cast<std::int32_t>(kTileM)},
                       own);
            w.tma_load(*sfb_map, layout.sf_b(st.index), full,
                       {0, atom0, n0(t, y) / static_cast<std::int32_t>(kTileM)}, own);
          }
        }
      if (p.bug != GemmBug::NoProducerTail) co_await mainloop.producer_tail(w, st);
    } else if (w.warp_idx() == 1 && leader) {
      w.set_role("MMA");
      PipelineState st =
          make_consumer_start_state(p.bug == GemmBug::StageCountOffByOne ? layout.stages - 1 : layout.stages);
      PipelineState acc = make_producer_start_state(layout.acc_stages);
      for (std::uint32_t i = 0, t = unit(w, 0); t < tiles(); t = unit(w, ++i), ++acc) {
        co_await accum.producer_acquire(w, acc);
        w.tcgen05_fence_after_thread_sync();
        const TmemAddr d = tmem + (p.bug == GemmBug::AccStageNotAdvanced ? 0 : acc.index) * p.tile_n;
        for (std::uint32_t kt = 0; kt < k_tiles; ++kt, advance(st)) {
          co_await mainloop.consumer_wait(w, st);
          if (sfa_map) copy_scales(w, tmem, st.index);
          for (std::uint32_t kb = 0; kb < kKBlocks; ++kb) {
            if (p.bug == GemmBug::SkipKBlock && kb == kKBlocks - 1) continue;
            const bool accumulate = kt > 0 || kb > 0 || p.bug == GemmBug::NoZeroInit;
            const SmemDescriptor a = operand(layout.a(st.index), kb), b = operand(layout.b(st.index), kb);
            if (sfa_map)
              w.tcgen05_mma(fmt.kind, d, a, b, idesc[kb], scales_of(tmem, kb), accumulate, g.pair);
            else
              w.tcgen05_mma(fmt.kind, d, a, b, idesc[kb], accumulate, g.pair);
          }
          if (p.bug == GemmBug::ReleaseBeforeCommit)
            w.mbarrier_arrive(mainloop.empty(st.index));
          else
            mainloop.consumer_release(w, st);  // tcgen05.commit: the stage is free once these MMAs read it
        }
        accum.producer_commit(w, acc);  // tcgen05.commit: the accumulator is complete
      }
      if (p.bug != GemmBug::EarlyDealloc) co_await accum.producer_tail(w, acc);  // the epilogue read every accumulator
    } else if (w.warp_idx() >= 2) {
      co_await epilogue(w, accum, tmem, x, y);
    }
    // No CTA exits while a peer may still signal or read it.
    if (g.size() > 1 && p.bug != GemmBug::NoClusterExitSync) co_await cluster_sync(w);
    if (w.warp_idx() == 1) w.tcgen05_dealloc(tmem, tmem_columns, g.pair);
  }

  // The scale factors' TMEM columns, after the accumulators: A's atoms, then B's (blocks per atom).
  TmemAddr sf_a_tmem(TmemAddr tmem) const { return tmem + layout.acc_stages * p.tile_n; }
  TmemAddr sf_b_tmem(TmemAddr tmem) const { return sf_a_tmem(tmem) + 4 * layout.sf.atoms; }

  // tcgen05.cp .32x128b.warpx4 of each 512-byte atom of the stage into 4 TMEM columns (row r of the
  // atom to lanes r, r + 32, r + 64, r + 96); on a pair, each CTA from its SMEM into its TMEM.
  void copy_scales(Warp& w, TmemAddr tmem, std::uint32_t stage) const {
    auto atom = [](SmemAddr at) {
      return encode(SmemDescriptorFields{.start_address = at.offset, .leading_byte_offset = 16, .stride_byte_offset = 128});
    };
    const ScaleTiles& sf = layout.sf;
    for (std::uint32_t a = 0; a < sf.atoms; ++a) {
      w.tcgen05_cp(sf_a_tmem(tmem) + 4 * a, atom(layout.sf_a(stage) + a * kSfAtom), TmemCopyShape::S32x128bWarpx4,
                   g.pair);
      for (std::uint32_t blk = 0; blk < sf.blocks; ++blk)
        w.tcgen05_cp(sf_b_tmem(tmem) + 4 * (a * sf.blocks + blk), atom(layout.sf_b(stage) + (blk * sf.atoms + a) * kSfAtom),
                     TmemCopyShape::S32x128bWarpx4, g.pair);
    }
  }

  // K block kb's factors: bytes kb * vec .. of the k-tile's, i.e. atom kb * vec / 4 at byte
  // (the descriptor's scale-factor ID) kb * vec % 4.
  Warp::BlockScale scales_of(TmemAddr tmem, std::uint32_t kb) const {
    const std::uint32_t atom = kb * static_cast<std::uint32_t>(fmt.vec) / 4;
    return {sf_a_tmem(tmem) + 4 * atom, sf_b_tmem(tmem) + 4 * layout.sf.blocks * atom, fmt.vec};
  }

  // ++ on a pipeline state, or (NoPhaseFlip) a wrap of the index that forgets the phase bit.
  void advance(PipelineState& st) const {
    if (p.bug != GemmBug::NoPhaseFlip) {
      ++st;
      return;
    }
    st.index = (st.index + 1) % st.stages;
    ++st.count;
  }

  // A CTA-wide sync for a cluster of one; barrier.cluster.arrive (.relaxed) + wait otherwise.
  Task cluster_sync(Warp& w, bool relaxed = false) const {
    if (g.size() == 1) {
      co_await w.syncthreads();
    } else {
      if (relaxed)
        w.cluster_arrive_relaxed();
      else
        w.cluster_arrive();
      co_await w.cluster_wait();
    }
  }

  // The accumulator registers to D's type in `staged`; fp32 -> bf16 costs one cvt.rn.bf16x2.f32
  // per pair of values and thread, on the conversion pipe (f32 and s32 are stored as they are).
  void convert(Warp& w, std::span<const std::uint32_t> regs, std::span<std::byte> staged) const {
    const std::uint32_t dsize = size_of(p.d_type);
    if (w.functional()) {
      if (p.d_type == DataType::BF16)
        for (std::uint32_t i = 0; i < 32 * kEpilogueCols; ++i)
          store_from_float(p.d_type, std::bit_cast<float>(regs[i]), &staged[i * dsize]);
      else
        std::memcpy(staged.data(), regs.data(), 32 * kEpilogueCols * dsize);
    }
  }

  Task epilogue(Warp& w, const PipelineUmmaAsync& accum, TmemAddr tmem, std::uint32_t x, std::uint32_t y) const {
    // The warp's TMEM lane quadrant = its 32 rows of the tile.
    const std::uint32_t q = p.bug == GemmBug::SameQuadrant ? w.warp_idx() - 2 : w.warp_idx() % 4;
    w.set_role(fmt::format("Epilogue rows {}-{}", 32 * q, 32 * q + 31));
    std::vector<std::uint32_t> regs(32 * kEpilogueCols);
    std::vector<std::byte> staged(layout.staging_bytes);
    PipelineState acc = make_consumer_start_state(layout.acc_stages);
    std::uint32_t chunk_count = 0;
    for (std::uint32_t i = 0, t = unit(w, 0); t < tiles(); t = unit(w, ++i), ++acc) {
      if (p.bug != GemmBug::EarlyEpilogueRead) co_await accum.consumer_wait(w, acc);
      w.tcgen05_fence_after_thread_sync();
      const std::uint32_t chunks = p.tile_n / kEpilogueCols;
      for (std::uint32_t c = 0; c < chunks; ++c, ++chunk_count) {
        const TmemAddr src = TmemAddr::at(32 * q, tmem.column() + acc.index * p.tile_n + c * kEpilogueCols);
        w.tcgen05_ld(src, TmemShape::S32x32b, kEpilogueCols, regs);
        if (p.bug == GemmBug::UseBeforeWaitLd) convert(w, regs, staged);
        co_await w.tcgen05_wait_ld();
        // The last read of this accumulator: hand it back to the MMA warp.
        if (p.bug == GemmBug::EarlyAccumulatorRelease ? c == 0 : c + 1 == chunks) {
          w.tcgen05_fence_before_thread_sync();
          if (p.bug != GemmBug::ReleaseBeforeEpilogueSync) {
            accum.consumer_release(w, acc);
          } else {  // released for all four, then the barrier that should have come first
            if (q == 0) accum.consumer_release(w, acc);
            co_await w.bar_sync(1, 32 * kEpilogueWarps);
          }
        }
        const SmemAddr buf = layout.buffer(q, chunk_count % 2);
        // The store issued from this buffer two chunks ago has read it.
        if (p.bug != GemmBug::StagingBufferReuse) co_await w.bulk_wait_group_read(1);
        if (p.bug != GemmBug::UseBeforeWaitLd) convert(w, regs, staged);
        // bf16: one cvt per pair of values, issued between the stores.
        w.st_shared_tensor(buf, staged, 0, {CorePipe::Cvt, p.d_type == DataType::BF16 ? kEpilogueCols / 2 : 0u});
        if (p.bug != GemmBug::MissingProxyFence) w.fence_proxy_async();  // st.shared data becomes visible to the TMA store
        w.tma_store(d_map, buf,
                    {n0(t, y) + static_cast<std::int32_t>(c * kEpilogueCols), m0(t, x) + static_cast<std::int32_t>(32 * q)});
        w.bulk_commit_group();
      }
    }
    if (p.bug != GemmBug::NoFinalStoreWait) co_await w.bulk_wait_group(0);
  }
};

void validate(const GemmParams& p, const GemmFormat& fmt) {
  if (fmt.kind == MmaKind::I8 ? p.d_type != DataType::S32 : p.d_type != DataType::F32 && p.d_type != DataType::BF16)
    throw InputError(fmt::format("--d-type {}: D of --dtype {} is {}", name_of(p.d_type), fmt.name,
                                 fmt.kind == MmaKind::I8 ? "s32" : "f32 or bf16"));
  if (fmt.block_scaled() && p.tile_n != 128 && p.tile_n != 256)
    throw InputError(fmt::format("--tile-n {}: the block-scaled GEMM's tiles are 128 or 256 columns (whole "
                                 "128-column scale-factor blocks)",
                                 p.tile_n));
  if (fmt.packed() && p.k % 32 != 0)
    throw InputError(fmt::format("--k {}: FP4 rows are packed in GMEM; K must be a multiple of 32 (16-byte rows)", p.k));
  if (p.tile_n % 32 != 0 || p.tile_n < 32 || p.tile_n > 256)
    throw InputError(fmt::format("--tile-n {}: a multiple of 32 in 32..256 (the epilogue's chunk)", p.tile_n));
  const ClusterGeometry g{p.cluster_m, p.cluster_n, p.two_sm ? 2u : 1u};
  if (g.cl_m == 0 || g.cl_n == 0 || g.size() > kMaxClusterCtas)
    throw InputError(fmt::format("--cluster {}x{}: at most {} CTAs", p.cluster_m, p.cluster_n, kMaxClusterCtas));
  if (g.cl_m % g.pair != 0)
    throw InputError(fmt::format("--cluster {}x{} with --2sm: the M extent must be even (CTA pairs)", p.cluster_m, p.cluster_n));
  // Each multicast piece is whole 8-row 128B-swizzle atoms.
  if (kTileM % g.cl_n != 0 || g.a_piece_rows() % 8 != 0)
    throw InputError(fmt::format("--cluster {}x{}: A's 128 rows do not split into {} pieces of whole 8-row atoms",
                                 p.cluster_m, p.cluster_n, g.cl_n));
  if (g.b_rows(p.tile_n) % g.units_m() != 0 || g.b_piece_rows(p.tile_n) % 8 != 0)
    throw InputError(fmt::format("--cluster {}x{}: B's {} rows per CTA do not split into {} pieces of whole 8-row atoms",
                                 p.cluster_m, p.cluster_n, g.b_rows(p.tile_n), g.units_m()));
  if (p.ctas % g.size() != 0)
    throw InputError(fmt::format("--ctas {}: not a multiple of the cluster's {} CTAs", p.ctas, g.size()));
}

// A block-scaled operand's factors in GMEM (GemmReference.hpp's layout): atoms of 128 rows x 4
// factors, consecutive along K within a 128-row block.
struct ScaleTensor {
  GmemAddr address;
  std::uint32_t atoms_k = 0, blocks = 0;
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(atoms_k) * blocks * kSfAtom; }
  // A box of `atoms` atoms along K by `box_blocks` blocks, as 32-bit words (128 per atom).
  TensorMap map(std::uint32_t atoms, std::uint32_t box_blocks) const {
    return TensorMap::tiled({.dtype = DataType::U32, .address = address, .dims = {kSfAtom / 4, atoms_k, blocks},
                             .strides = {kSfAtom, static_cast<std::uint64_t>(atoms_k) * kSfAtom},
                             .box = {kSfAtom / 4, atoms, box_blocks}});
  }
};

ScaleTensor alloc_scales(Simulator& sim, const GemmFormat& fmt, std::uint32_t rows, std::uint32_t k, std::uint32_t seed) {
  ScaleTensor s{.atoms_k = scale_atoms_k(k, fmt.scale_block), .blocks = (rows + kTileM - 1) / kTileM};
  s.address = sim.gmem().alloc(s.bytes());
  if (sim.gmem().holds_data()) fill_random_scales(sim.gmem().bytes(s.address, s.bytes()), fmt.scale, seed);
  return s;
}

}  // namespace

GemmResult run_gemm(const HardwareConfig& config, const SimOptions& options, const GemmParams& p, bool check) {
  const GemmFormat& fmt = gemm_format(p.dtype);
  validate(p, fmt);
  const std::uint32_t ed = size_of(p.d_type);
  const std::uint32_t a_pitch = align_up(static_cast<std::uint32_t>(p.k * std::uint64_t{gmem_bits_of(fmt.gmem)} / 8), 16);
  const std::uint32_t d_pitch = align_up(p.n * ed, 16);
  Simulator sim(config, options);
  const GmemAddr a = sim.gmem().alloc(static_cast<std::uint64_t>(a_pitch) * p.m);
  const GmemAddr b = sim.gmem().alloc(static_cast<std::uint64_t>(a_pitch) * p.n);
  const GmemAddr d = sim.gmem().alloc(static_cast<std::uint64_t>(d_pitch) * p.m);
  const std::uint32_t tile_k = gemm_tile_k(fmt);
  auto operand_map = [&](GmemAddr addr, std::uint32_t rows, std::uint32_t box_rows) {
    return TensorMap::tiled({.dtype = fmt.gmem, .address = addr, .dims = {p.k, rows}, .strides = {a_pitch},
                             .box = {tile_k, box_rows}, .swizzle = Swizzle::B128});
  };
  const ClusterGeometry g{p.cluster_m, p.cluster_n, p.two_sm ? 2u : 1u};
  const TensorMap a_map = operand_map(a, p.m, g.a_piece_rows());
  const TensorMap b_map = operand_map(b, p.n, g.b_piece_rows(p.tile_n));
  const TensorMap d_map = TensorMap::tiled({.dtype = p.d_type, .address = d, .dims = {p.n, p.m}, .strides = {d_pitch},
                                            .box = {kEpilogueCols, 32}, .swizzle = Swizzle::None});
  if (sim.gmem().holds_data()) {
    fill_random(sim.gmem().bytes(a, static_cast<std::uint64_t>(a_pitch) * p.m), fmt.element, p.m, p.k, a_pitch, 1,
                fmt.packed());
    fill_random(sim.gmem().bytes(b, static_cast<std::uint64_t>(a_pitch) * p.n), fmt.element, p.n, p.k, a_pitch, 2,
                fmt.packed());
  }
  ScaleTiles sf;
  std::optional<ScaleTensor> sfa, sfb;
  std::optional<TensorMap> sfa_map, sfb_map;
  if (fmt.block_scaled()) {
    sf = ScaleTiles{.atoms = tile_k / fmt.scale_block / 4, .blocks = p.tile_n / kTileM};
    sfa = alloc_scales(sim, fmt, p.m, p.k, 3);
    sfb = alloc_scales(sim, fmt, p.n, p.k, 4);
    sfa_map = sfa->map(sf.atoms, 1);
    sfb_map = sfb->map(sf.atoms, sf.blocks);
  }
  // Two accumulators (the epilogue overlaps the next tile's mainloop) if they fit beside the
  // scale factors in TMEM, else one.
  const std::uint32_t acc_stages = 2 * p.tile_n + sf.tmem_columns() <= config.tmem.columns ? 2 : 1;

  const Layout layout = make_layout(p, g.b_rows(p.tile_n), sf, acc_stages, config.sm.max_smem_per_cta);
  TileGrid grid{(p.m + kTileM * g.cl_m - 1) / (kTileM * g.cl_m), (p.n + p.tile_n * g.cl_n - 1) / (p.tile_n * g.cl_n),
                p.raster, p.swizzle};
  if (p.auto_raster) grid.raster = grid.tiles_m > grid.tiles_n ? Raster::AlongN : Raster::AlongM;
  const std::unique_ptr<TileScheduler> scheduler = tile_schedulers().at(p.tile_scheduler).make(grid);
  const std::uint32_t tmem_columns = std::bit_ceil(acc_stages * p.tile_n + sf.tmem_columns());
  if (config.tmem.columns == 0)
    throw InputError(fmt::format("the {} config has no tensor memory and no tcgen05 (tmem.columns = 0): the gemm "
                                 "kernels need a Blackwell config such as sim_configs/b200.yaml",
                                 config.name));
  if (tmem_columns > config.tmem.columns)
    throw InputError(fmt::format("--tile-n {}: the accumulators and scale factors need {} TMEM columns, the SM has {}",
                                 p.tile_n, tmem_columns, config.tmem.columns));
  std::array<InstrDescriptor, kKBlocks> idesc;
  for (std::uint32_t kb = 0; kb < kKBlocks; ++kb) {
    const std::uint32_t sf_id = kb * static_cast<std::uint32_t>(fmt.vec) % 4;
    idesc[kb] = encode(fmt.kind, InstrDescriptorFields{.a_type = fmt.element,
                                                       .b_type = fmt.element,
                                                       .d_type = fmt.accumulator(),
                                                       .m = kTileM * g.pair,
                                                       .n = p.tile_n,
                                                       .scale_type = fmt.block_scaled() ? fmt.scale : DataType::UE8M0,
                                                       .a_sf_id = fmt.block_scaled() ? sf_id : 0,
                                                       .b_sf_id = fmt.block_scaled() ? sf_id : 0});
  }
  const Kernel kernel{p,
                      fmt,
                      a_map,
                      b_map,
                      d_map,
                      sfa_map ? &*sfa_map : nullptr,
                      sfb_map ? &*sfb_map : nullptr,
                      layout,
                      g,
                      *scheduler,
                      (p.k + tile_k - 1) / tile_k,
                      tmem_columns,
                      idesc};
  GemmResult r;
  r.raster = grid.raster;
  r.stages = layout.stages;
  r.tiles = kernel.tiles() * g.size();
  r.flops = 2.0 * p.m * p.n * p.k;
  r.run = sim.launch("gemm",
                     LaunchConfig{.grid_ctas = p.ctas,
                                  .block_threads = 32 * (2 + kEpilogueWarps),
                                  .dynamic_smem_bytes = layout.smem_bytes,
                                  .cluster = {g.cl_m, g.cl_n, 1},
                                  .non_portable_cluster = g.size() > config.cluster.max_ctas_portable},
                     [&kernel](Warp& w) { return kernel(w); });
  if (check && sim.gmem().holds_data()) {
    GemmScales scales;
    if (sfa)
      scales = {sim.gmem().bytes(sfa->address, sfa->bytes()), sim.gmem().bytes(sfb->address, sfb->bytes()), fmt.scale,
                fmt.scale_block};
    const GemmCheck c = check_gemm({p.m, p.n, p.k, fmt.element, p.d_type, fmt.packed(), scales},
                                   sim.gmem().bytes(a, static_cast<std::uint64_t>(a_pitch) * p.m), a_pitch,
                                   sim.gmem().bytes(b, static_cast<std::uint64_t>(a_pitch) * p.n), a_pitch,
                                   sim.gmem().bytes(d, static_cast<std::uint64_t>(d_pitch) * p.m), d_pitch);
    r.checked = true;
    r.matches = c.matches;
    r.detail = c.detail;
    r.max_error = c.max_error;
  }
  return r;
}

namespace {
// gemm_persistent's own flags: the 1-SM or 2-SM variant, its cluster (auto: 2x1 pairs or 1x1),
// a grid of as many clusters as run at once (ctas 0), the tile scheduler, raster order and swizzle.
struct PersistentChoice {
  bool two_sm = true;
  std::string cluster;
};
PersistentChoice persistent_choice(const KernelArgs& a, GemmParams& p) {
  PersistentChoice c;
  const std::string& variant = a.text("variant");
  if (variant != "1sm" && variant != "2sm")
    throw InputError(fmt::format("--variant: expected 1sm or 2sm, got '{}'", variant));
  c.two_sm = variant == "2sm";
  c.cluster = a.text("cluster") == "auto" ? (c.two_sm ? "2x1" : "1x1") : a.text("cluster");
  const std::string& raster = a.text("raster");
  if (raster != "m" && raster != "n" && raster != "auto")
    throw InputError(fmt::format("--raster: expected m, n or auto, got '{}'", raster));
  p.raster = raster == "n" ? Raster::AlongN : Raster::AlongM;
  p.auto_raster = raster == "auto";
  p.swizzle = static_cast<std::uint32_t>(a.integer("swizzle", 1, 8));
  if (std::popcount(p.swizzle) != 1) throw InputError(fmt::format("--swizzle {}: expected 1, 2, 4 or 8", p.swizzle));
  p.tile_scheduler = a.text("tile-scheduler");
  return c;
}

std::string bug_names() {
  std::string names;
  for (const auto& [b, n] : kBugNames) names += fmt::format("{}{}", names.empty() ? "" : ", ", n);
  return names;
}

KernelReport run_from_cli(const KernelRequest& req, const char* kernel, bool two_sm, bool persistent) {
  const KernelArgs& a = req.args;
  GemmParams p;
  std::string cluster = a.text("cluster");
  if (persistent) {
    const PersistentChoice c = persistent_choice(a, p);
    two_sm = c.two_sm;
    cluster = c.cluster;
  }
  p.m = static_cast<std::uint32_t>(a.integer("m", 1, 1u << 20));
  p.n = static_cast<std::uint32_t>(a.integer("n", 1, 1u << 20));
  p.k = static_cast<std::uint32_t>(a.integer("k", 1, 1u << 20));
  auto type = [&](const char* flag) {
    const auto t = parse_data_type(a.text(flag));
    if (!t) throw InputError(fmt::format("--{}: unknown type '{}'", flag, a.text(flag)));
    return *t;
  };
  p.dtype = a.text("dtype");
  p.d_type = a.text("d-type") == "auto" ? gemm_format(p.dtype).accumulator() : type("d-type");
  p.tile_n = static_cast<std::uint32_t>(a.integer("tile-n", 1, 256));
  p.stages = static_cast<std::uint32_t>(a.integer("stages", 0, 16));
  p.ctas = static_cast<std::uint32_t>(a.integer("ctas", persistent ? 0 : 1, 1u << 16));
  unsigned cm = 0, cn = 0;
  char sep = 0;
  if (std::sscanf(cluster.c_str(), "%u%c%u", &cm, &sep, &cn) != 3 || sep != 'x' || cm == 0 || cn == 0)
    throw InputError(fmt::format("--cluster: expected MxN (CTAs along M and N, e.g. 2x2), got '{}'", cluster));
  p.cluster_m = cm;
  p.cluster_n = cn;
  p.two_sm = two_sm;
  if (p.ctas == 0) {  // persistent: as many clusters as the chip runs at once
    if (static_cast<std::uint64_t>(cm) * cn > kMaxClusterCtas)
      throw InputError(fmt::format("--cluster {}x{}: at most {} CTAs", cm, cn, kMaxClusterCtas));
    const std::uint32_t clusters = max_active_clusters(req.config, cm * cn);
    if (clusters == 0)
      throw InputError(fmt::format("--cluster {}x{}: a cluster of {} CTAs fits in no GPC of the {} config", cm, cn,
                                   cm * cn, req.config.name));
    p.ctas = clusters * cm * cn;
  }
  const std::string& bug = a.text("bug");
  const auto parsed = parse_gemm_bug(bug);
  if (!parsed) throw InputError(fmt::format("--bug: expected one of {}; got '{}'", bug_names(), bug));
  p.bug = *parsed;

  const GemmResult r = run_gemm(req.config, req.options, p, req.check);
  KernelReport rep;
  rep.kernel = kernel;
  const GemmFormat& format = gemm_format(p.dtype);
  rep.problem = fmt::format("D({}) = A x B^T, M={} N={} K={} {} (kind::{}), MMA tile {}x{}x{}{}, {} stages, {} CTA{} in {}x{} clusters",
                            name_of(p.d_type), p.m, p.n, p.k, format.name, name_of(format.kind),
                            kTileM * (two_sm ? 2 : 1), p.tile_n, gemm_tile_k(format), two_sm ? " (CTA pairs)" : "",
                            r.stages, p.ctas, p.ctas == 1 ? "" : "s", p.cluster_m, p.cluster_n);
  if (persistent)
    rep.problem += fmt::format(", raster {}{}, swizzle {}", r.raster == Raster::AlongM ? "M" : "N",
                               p.auto_raster ? " (auto)" : "", p.swizzle);
  rep.run = r.run;
  rep.checked = r.checked;
  rep.check_passed = r.matches;
  rep.check_detail = r.checked ? r.detail : "not checked";
  const double seconds = static_cast<double>(r.run.cycles) / (req.config.clock_ghz * 1e9);
  const double peak_per_sm = mma_flops_per_cycle(req.config, format.kind);
  rep.figures = {{"tflops", seconds > 0 ? r.flops / seconds / 1e12 : 0.0},
                 {"tiles", r.tiles},
                 {"stages", r.stages},
                 {"mmas", r.run.mma.mmas},
                 {"l2_to_smem_bytes", r.run.tma.load_bytes},
                 {"smem_filled_bytes", r.run.tma.delivered_bytes},
                 {"tensor_busy_fraction", r.run.mma_busy_fraction()},
                 {"flops_per_cycle_per_sm", r.run.cycles && r.run.sms_used ? r.flops / static_cast<double>(r.run.cycles) / r.run.sms_used : 0.0},
                 {"peak_flops_per_cycle_per_sm", peak_per_sm}};
  return rep;
}
std::vector<KernelParam> gemm_params(const char* cluster, const char* ctas) {
  return {{"m", "rows of A and D", "512"},
          {"n", "rows of B, columns of D", "512"},
          {"k", "reduction length", "512"},
          {"dtype", "A/B format: " + gemm_format_names(), "bf16"},
          {"d-type", "D element type: f32 or bf16 (s32 for s8); auto: the accumulator's (f32, s32)", "auto"},
          {"tile-n", "MMA tile columns: a multiple of 32 up to 256", "256"},
          {"stages", "mainloop SMEM stages; 0: as many as fit", "0"},
          {"ctas", "CTAs, a multiple of the cluster size (persistent: each cluster loops over every n-th cluster tile)",
           ctas},
          {"cluster", "cluster shape MxN in CTAs (A multicast along N, B along M); more than 8 opts in to "
                      "non-portable sizes",
           cluster},
          {"bug", "inject a kernel bug: " + bug_names(), "none"}};
}

std::vector<KernelParam> persistent_params() {
  std::vector<KernelParam> ps = gemm_params("auto", "0");
  for (KernelParam& k : ps) {
    if (k.name == "ctas") k.help = "CTAs; 0: as many clusters as run at once on the chip (the persistent grid)";
    if (k.name == "cluster") k.help = "cluster shape MxN in CTAs; auto: 2x1 for --variant 2sm, 1x1 for 1sm";
  }
  ps.push_back({"variant", "2sm: 256 x tile-n MMAs on CTA pairs (cta_group::2); 1sm: 128 x tile-n per CTA", "2sm"});
  ps.push_back({"tile-scheduler", "which cluster tile each cluster computes next: " + tile_schedulers().names(),
                "static_persistent"});
  ps.push_back({"raster", "order of the tiles: m (M fastest), n, or auto (along N when M has more tiles)", "auto"});
  ps.push_back({"swizzle", "tiles per raster band: 1, 2, 4 or 8 (L2 reuse of the operands)", "1"});
  return ps;
}

KernelReport run_gemm_1sm(const KernelRequest& req) { return run_from_cli(req, "gemm", false, false); }
KernelReport run_gemm_mcast(const KernelRequest& req) { return run_from_cli(req, "gemm_mcast", false, false); }
KernelReport run_gemm_2sm(const KernelRequest& req) { return run_from_cli(req, "gemm_2sm", true, false); }
KernelReport run_gemm_persistent(const KernelRequest& req) { return run_from_cli(req, "gemm_persistent", true, true); }
}  // namespace

std::vector<KernelInfo> gemm_kernel_infos() {
  return {KernelInfo{"gemm",
                     "Warp-specialized tcgen05 GEMM D = A x B^T: TMA producer warp, MMA warp, 4-warp "
                     "TMEM->SMEM->TMA epilogue; 128 x tile-n MMAs (cta_group::1)",
                     gemm_params("1x1", "1"), &run_gemm_1sm},
          KernelInfo{"gemm_mcast",
                     "The gemm kernel in a cluster (default 2x2) with multicast TMA loads and multicast commits",
                     gemm_params("2x2", "4"), &run_gemm_mcast},
          KernelInfo{"gemm_2sm",
                     "The gemm kernel on CTA pairs: 256 x tile-n cta_group::2 MMAs issued by the pair's leader, "
                     "cta_group::2 TMA loads, multicast across pairs (cluster default 2x1)",
                     gemm_params("2x1", "2"), &run_gemm_2sm},
          KernelInfo{"gemm_persistent",
                     "The production structure of CUTLASS's SM100 persistent GEMM: a grid of as many clusters as "
                     "the chip runs at once, a static tile scheduler with raster order and swizzle, 1-SM or 2-SM "
                     "MMAs, double-buffered TMEM accumulators",
                     persistent_params(), &run_gemm_persistent}};
}

}  // namespace bwsim
