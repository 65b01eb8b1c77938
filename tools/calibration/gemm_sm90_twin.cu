// gemm_sm90_twin: a warp-specialized persistent bf16 GEMM written in the structure of CUTLASS's
// SM90 TMA warp-specialized kernels (cooperative and ping-pong schedules), with inline PTX only,
// as the silicon twin of bwsim's gemm_sm90 kernel. D = A * B^T: A is M x K (K contiguous), B is
// N x K (K contiguous), D is M x N (N contiguous), all bf16; fp32 accumulation; D rounded with
// cvt.rn.bf16x2.f32. The simulator port follows this file line for line.
//
// CLI: --m --n --k --schedule cooperative|pingpong --rows-per-wg 64|128 --tile-n 128|256
//      --stages S (0: as many as fit) --raster m|n --swizzle 1|2|4|8 --grid G (0: min(tiles, SMs))
//      --reps R (10) --sleep-ms T (20) --check 0|1 --header --sustain-ms T --tile-log FILE
//      --log-reps 0|1 --kb-log 0|1 --rotate R --phase-log FILE --chunk-log FILE --path-log FILE
//      --no-epilogue --clock-log FILE --promotion 128|256 (256)
// --clock-log FILE (diagnostic): each CTA's SM, its start and its later WG's end (%globaltimer)
// and the clock64 cycles between them (write_clock_log): whether every SM ran at one clock.
// --phase-log FILE (diagnostic): each consumer WG's mainloop start, mainloop end and epilogue end
// per tile (see k_gemm's kPhases); bwsim run gemm_sm90 --phase-log writes the same columns.
// --chunk-log FILE (diagnostic, with --phase-log): each epilogue chunk's wait, bar.syncs and TMA
// store, SM cycles after its tile's mainloop end (write_phase_log).
// --path-log FILE (diagnostic, with --phase-log): per CTA, the mean cycles from the producer's
// empty-barrier wait returning to its k-block's first TMA load (write_path_log): the k-block loop's
// own code on the pipeline's critical path; and each consumer WG's from a full barrier's wait
// returning to its k-block's first wgmma having issued.
// --no-epilogue (diagnostic, with --phase-log): the epilogue's stores, fences and TMA stores are
// skipped (D is not written; the turn barriers stay), to see what they cost the other warpgroup.
// --tile-log FILE (diagnostic): thread 0 records each CTA's %smid at entry and the producer records
// %globaltimer when it is about to issue a tile's first loads (after that stage's empty wait); the
// last timed launch's values go to FILE as CSV (cta,smid,j,tile,m,n,start_ns,start_cycles; times
// from the first tile's start, cycles at that launch's clock): bwsim run gemm_sm90 --tile-log writes
// the same columns, tile_drift.py compares them. Only the producer's thread and kernel entry change:
// the consumers' code is the same as without it (probes in their k-block loop, a timestamp and a
// branch, made ptxas add a WARPGROUP.ARRIVE there and slowed the ping-pong 4096^3 row by 23%).
// --log-reps 1 (with --tile-log): every timed launch's log, FILE.r2, FILE.r3, ... (launches 0 and 1
// are the untimed warm-ups), to see whether the SMs' paces hold from launch to launch.
// --kb-log 1 (with --tile-log): the producer records every k-block's issue, not only each tile's
// first (a kb column in FILE), to see how far apart the SMs reading one B box ask for it.
// --rotate R (diagnostic, default 0): CTA c computes the tiles of worker (c + R) mod grid instead
// of worker c, so the same work runs on other SMs (does a CTA's pace follow its SM or its tiles?).
// --sustain-ms T (power issue 18): instead of the timed reps, launch back to back for T ms (in
// batches of about 20 ms, one event pair and one NVML energy reading per batch) and print one
// "sustained" row: over the batches of the last half, wall time per GEMM, the SM clock of each
// batch's last launch (clock64 / %globaltimer, as for the reps) averaged, cycles per GEMM =
// time x clock, and the board's mean power (energy counter difference / wall time); also the
// first batch's time per GEMM and clock. Every batch goes to stderr as "batch,..." (its end in
// s from the first launch, us per GEMM, MHz, W), the controller's trajectory, and every 50 ms NVML
// sample as "sample,..." (s, SM MHz, NVML's 1 s average W, temperature C, clock-event reasons).
// Supported (rows_per_wg, tile_n): (64,256) and (128,128), both schedules (4 instantiations).
// Tile: cooperative BM = 2*rows_per_wg (WG g of the two consumers owns rows [g*rows, (g+1)*rows)
// of every tile), pingpong BM = rows_per_wg (each consumer WG owns whole tiles); BN = tile_n;
// BK = 64 (128 B, one 128B-swizzle row). Each consumer thread holds (rows/64) x (BN/2) fp32.
//
// CTA: 384 threads, __launch_bounds__(384, 1), one CTA per SM. WG0 = producer (all 4 warps
// setmaxnreg.dec 40; warp 0 lane 0 issues every TMA load; lanes 1-31 of warp 0 and warps 1-3
// then leave). WG1, WG2 = consumers 0, 1 (setmaxnreg.inc 232).
//
// Dynamic SMEM (base rounded up to 1024 B): stage s = [A: BM rows x 128 B][B: BN rows x 128 B]
// (128B-swizzled as TMA writes them) for s = 0..S-1; then epilogue buffers [consumer g][buffer b]
// of 8192 B (64 x 64 bf16, 128B-swizzled) at index 2g+b; then mbarriers full[S], empty[S],
// mma_turn[2], epi_turn[2] (8 B each). S = 0 picks the most stages with 1024 (alignment slack)
// + S*(BM+BN)*128 + 32768 + (2S+4)*8 <= 232448, capped at 16: coop 64/256 -> 4, coop 128/128
// -> 4, pingpong 128/128 -> 6, pingpong 64/256 -> 4 (the slack changes none of these).
//
// Barriers: full[s] count 1 (producer's arrive.expect_tx of (BM+BN)*128 bytes), empty[s] count
// 4 x consumer WGs reading a stage (8 cooperative, 4 pingpong; lane 0 of each consumer warp
// arrives once), mma_turn[g], epi_turn[g] count 4 (lane 0 of each warp of the releasing WG).
// Thread 0 inits them, then fence.mbarrier_init.release.cluster + fence.proxy.async.shared::cta,
// then __syncthreads (the only CTA-wide barrier) before the roles split.
//
// Tile scheduler: static persistent; CTA c of G takes work units c, c+G, ...; unit -> (m, n) is
// bwsim::TileScheduler::tile (include/bwsim/kernels/TileScheduler.hpp), ported in tile_of().
//
// Producer: pipeline state (index, phase) from (0, 0); per tile, per k-block kb < ceil(K/64):
// wait empty[idx] parity phase^1; arrive.expect_tx full[idx] (BM+BN)*128; TMA A box {64, BM}
// at (kb*64, m*BM) and B box {64, BN} at (kb*64, n*BN), both completing on full[idx]; advance.
// Tensor maps: bf16, 2D, SWIZZLE_128B, L2 promotion 256B (A's and B's 128B with --promotion 128),
// OOB fill none (zeros), passed as __grid_constant__ parameters. D's map: box {64, 64},
// SWIZZLE_128B.
//
// Consumer mainloop of one tile (r0 = g*rows cooperative, 0 pingpong; fragment f at rows
// r0+64f of the stage's A): wgmma.fence once; per kb: wait full[idx] parity phase; for kk in
// 0..3, for f: wgmma m64n{BN}k16.f32.bf16.bf16 acc[f], descA(A + (r0+64f)*128 + kk*32),
// descB(B + kk*32), scale-d = (kb > 0 || kk > 0); commit_group; if kb > 0: wait_group 1, lane
// 0 of each warp arrives on empty[previous kb's idx]; advance. Then wait_group 0 and release the
// last k-block's stage.
// GMMA descriptor (64 bit): (addr & 0x3FFFF) >> 4 in bits 0-13, LBO 16 B >> 4 = 1 in bits 16-29
// (unused for swizzled K-major), SBO 1024 B >> 4 = 64 in bits 32-45, base offset 0 (bits 49-51;
// every stage and fragment starts on a 1024-B boundary), layout type 1 = SWIZZLE_128B in bits
// 62-63. Checked against the PTX ISA "Matrix Descriptor Format" of wgmma (section
// 9.7.15.5.1.2.2, PTX ISA 9.x, via the ptx.poole.ai mirror of docs.nvidia.com/cuda/
// parallel-thread-execution): bits 13-0 start, 29-16 LBO, 45-32 SBO, 51-49 base offset, 63-62
// swizzle (1 = 128B), each field matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4.
//
// Epilogue of a tile (per consumer WG, after its mainloop): for f, for 64-column chunk c of BN
// (q counts chunks over all the WG's tiles, buffer b = q % 2): (1) WG thread 0:
// cp.async.bulk.wait_group.read 1; bar.sync 1+g, 128; (2) each thread cvt.rn.bf16x2.f32 its
// pairs of rows [64f, 64f+64) x cols [64c, 64c+64) and st.shared.b32 them at
// row*128 + ((col/8) ^ (row%8))*16 + (col%8)*2 in buffer b (accumulator fragment: warp w, lane
// l, register 4j+i: row 16w + l/4 + 8*(i/2), col 8j + 2*(l%4) + i%2); (3) every thread
// fence.proxy.async.shared::cta; bar.sync 1+g, 128; (4) WG thread 0: TMA store of the 64x64
// box to D at (n*BN + 64c, m*BM + r0 + 64f) (clipped by TMA) and commit_group. After the WG's
// last tile its thread 0 does cp.async.bulk.wait_group 0.
//
// Pingpong: consumer g takes the CTA's local tiles j = g, g+2, ...; its pipeline state starts
// k_tiles stages in for g = 1 and skips k_tiles stages after each of its tiles. Before each
// mainloop except WG 0's first: wait mma_turn[g] (own parity from 0, flipping per wait); after
// the last k-block's wgmmas + commit (+ the wait_group 1 / release in the loop): lane 0 of each
// warp arrives on mma_turn[1-g]; then the tail (wait_group 0, release). Before each epilogue
// except WG 0's first: wait epi_turn[g]; after the last TMA store + commit and a bar.sync
// 1+g, 128: lane 0 of each warp arrives on epi_turn[1-g]. Cooperative uses no turn barriers.
//
// Timing: thread 0 of each CTA records %globaltimer and clock64 at kernel entry; thread 0 of
// each consumer WG records both after its final bulk wait_group 0 (the last thing it does).
// span_ns = max(end over CTAs and WGs) - min(start over CTAs); clock_mhz from the CTA with the
// longest life (latest WG end - its start): its clock64 delta / its globaltimer delta in us;
// cycles = span_ns * clock_mhz / 1000. Per configuration: (check run), 2 warm-up launches,
// then R timed launches, each after cudaDeviceSynchronize + a 20 ms host sleep (--sleep-ms); the
// row reports the launch at the upper median of cycles (sorted[R/2]) with its clock, span and
// cudaEvent time, and stderr has every timed launch's cycles, clock and span ("# launch r: ...").
// tflops = 2*M*N*K / span_ns / 1000.
// Check (--check 1): A, B = bf16 of a hash of the index in [-1, 1); D pre-filled with 0xFF
// (NaN); one launch; reference GEMM on the GPU (one thread per output, fp32 sum in k order);
// pass iff every |D - ref| <= 2^-7 |ref| + 1e-2 sqrt(K/64) (bf16 rounding is <= 2^-8 |ref|, the
// rest covers fp32 summation order). Prints max error on stderr; exits 2 on FAIL.
//
// Choices beyond the spec that the port must mirror: the producer's elected lane is lane 0 of
// warp 0 (no elect.sync); consumer accumulators are zeroed once at kernel start (scale-d 0
// overwrites them per tile); a pingpong WG with no tiles does nothing but its final wait/end
// record; cooperative CTAs with no tiles likewise; the warpgroup index is broadcast from lane 0
// (__shfl_sync) so that ptxas treats the role / tile-loop branches as warp-uniform (without it,
// the pingpong kernels got C7520: wgmma serialized). SASS as built by nvcc 13.0 for sm_90a:
// 0 STL/LDL; ptxas reports C7519 "warpgroup.arrive is injected ... to allow use of registers in
// GMMA" at the first wgmma of the k-block loop body, so the SASS carries a WARPGROUP.ARRIVE per
// k-block (as CUTLASS's mainloop issues warpgroup_arrive per k-block) besides the one per tile
// in the source: 2 WARPGROUP.ARRIVE and 2 WARPGROUP.DEPBAR (wait_group 1, 0) per kernel.
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a gemm_sm90_twin.cu -lcuda
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "calibration_nvml.cuh"
#include "calibration_ptx.cuh"

constexpr int kSmemOptInMax = 232448;  // sm_90 opt-in max dynamic SMEM per block
constexpr int kMaxStages = 16;
constexpr int kEpiBytes = 2 * 2 * 8192;  // 2 consumer WGs x 2 buffers x 64x64 bf16
constexpr int kMaxChunks = 8;            // epilogue chunks of a WG's tile: 2 fragments x 4 at most
// Per CTA: %globaltimer and clock64 at entry, each consumer WG's pair at its end, its SM.
constexpr int kTimSlots = 7;
constexpr int kStampSlots = 3 + 4 * kMaxChunks;      // --chunk-log clock64 stamps per WG tile (see k_gemm)
constexpr int kPhaseSlots = 3 + kStampSlots;         // --phase-log values per WG tile
constexpr int kPathSlots = 6;  // --path-log: per CTA the producer's and each consumer WG's cycle sum and count

// ---- PTX helpers (the shared ones: calibration_ptx.cuh) ----------------------------------
__device__ __forceinline__ void bulk_wait_read_1() { asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); }
__device__ __forceinline__ void named_bar(unsigned id) { asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory"); }

// ---- wgmma (SS bf16, f32 accumulators); WG_SS_BF16, the operand-list macros, wgmma_fence /
// commit / wait, fence_regs and gmma_desc: calibration_ptx.cuh -----------------------------

template <int N>
struct Wgmma;
template <>
struct Wgmma<128> {
  __device__ __forceinline__ static void ss(float (&d)[64], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_BF16(128, WG_ACC64, 64, 65, 66) : ACC_OPS_64(d) : "l"(da), "l"(db), "r"(s));
  }
};
template <>
struct Wgmma<256> {
  __device__ __forceinline__ static void ss(float (&d)[128], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_BF16(256, WG_ACC128, 128, 129, 130) : ACC_OPS_128(d) : "l"(da), "l"(db), "r"(s));
  }
};
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));  // d.hi = first source
  return r;
}

// ---- tile scheduler (port of bwsim::TileScheduler::tile) --------------------------------
struct GemmParams {
  int M, N, K;
  unsigned tiles_m, tiles_n, k_tiles;
  unsigned stages;
  unsigned raster_m;  // 1: AlongM, 0: AlongN
  unsigned swizzle;
  unsigned log_tiles = 0;  // --tile-log: tiles per CTA whose start is recorded (0: none)
  unsigned log_kblocks = 0;   // --kb-log 1: every k-block's issue is recorded, not only each tile's first
  unsigned rotate = 0;     // --rotate R: CTA c computes the tiles of worker (c + R) % grid
  unsigned phase_tiles = 0;  // --phase-log: tiles per consumer WG whose phases are recorded (0: none)
  unsigned no_epilogue = 0;  // --no-epilogue (with --phase-log only): the epilogue stores nothing
};
// --path-log: the slots after the phase log's, per CTA: the producer thread's summed cycles from
// an empty barrier's wait returning to its k-block's first TMA load, and the number of k-blocks;
// then the same for each consumer WG's thread 0, from a full barrier's wait returning to its
// k-block's first wgmma having issued (slot 2 + 2g: cycles, 3 + 2g: count).
__host__ __device__ inline size_t path_slot(const GemmParams& p, unsigned grid, unsigned cta, unsigned slot) {
  return static_cast<size_t>(grid) * 2 * p.phase_tiles * kPhaseSlots + static_cast<size_t>(cta) * kPathSlots + slot;
}
// Stamps per logged tile: every k-block's with --kb-log, else the first's.
__host__ __device__ inline unsigned log_per_tile(const GemmParams& p) { return p.log_kblocks ? p.k_tiles : 1; }
// A CTA's slots in the tile log: its SM, then log_per_tile stamps per logged tile.
__host__ __device__ inline unsigned log_stride(const GemmParams& p) { return p.log_tiles * log_per_tile(p) + 1; }
// Records, if the log has a slot for it, when the CTA's tile j (its k-block kb) had its loads issued
// (the producers of this twin and of h100_gemm_loads.cu, just before arrive.expect_tx).
__device__ inline void log_issue(long long* tile_log, const GemmParams& p, unsigned j, unsigned kb) {
  if (tile_log && kb < log_per_tile(p) && j < p.log_tiles)
    tile_log[blockIdx.x * log_stride(p) + 1 + j * log_per_tile(p) + kb] = static_cast<long long>(globaltimer());
}
__host__ __device__ inline void tile_of(const GemmParams& p, unsigned t, unsigned& m, unsigned& n) {
  const bool along_m = p.raster_m != 0;
  const unsigned fast = along_m ? p.tiles_m : p.tiles_n;
  const unsigned slow = along_m ? p.tiles_n : p.tiles_m;
  const unsigned band = t / (fast * p.swizzle);
  const unsigned width = p.swizzle < slow - band * p.swizzle ? p.swizzle : slow - band * p.swizzle;
  const unsigned i = t - band * fast * p.swizzle;
  const unsigned f = i / width, s = band * p.swizzle + i % width;
  m = along_m ? f : s;
  n = along_m ? s : f;
}

struct PipeState {
  unsigned idx = 0, phase = 0;
  __device__ __forceinline__ void advance(unsigned stages) {
    if (++idx == stages) {
      idx = 0;
      phase ^= 1;
    }
  }
  __device__ __forceinline__ void advance_by(unsigned n, unsigned stages) {
    const unsigned t = idx + n;
    phase ^= (t / stages) & 1;
    idx = t % stages;
  }
};

template <bool kCoop, int kRows, int kBN>
struct Cfg {
  static constexpr int BM = kCoop ? 2 * kRows : kRows;
  static constexpr int BN = kBN;
  static constexpr int F = kRows / 64;  // m64 fragments per consumer WG
  static constexpr int kABytes = BM * 128, kBBytes = BN * 128, kStageBytes = kABytes + kBBytes;
  static constexpr int kChunks = BN / 64;
  static constexpr int kReaders = kCoop ? 2 : 1;  // consumer WGs reading each stage
  static size_t smem_bytes(int stages) {
    return 1024 + static_cast<size_t>(stages) * kStageBytes + kEpiBytes + (2 * stages + 4) * 8 + 2 * kStampSlots * 8;
  }
  static int max_stages() {
    int s = 1;
    while (s < kMaxStages && smem_bytes(s + 1) <= static_cast<size_t>(kSmemOptInMax)) ++s;
    return s;
  }
};

// timing: per CTA 6 values: start_ns, start_clk, end_ns[WG0], end_clk[WG0], end_ns[WG1], end_clk[WG1]
// kPhases (--phase-log, a diagnostic; its own instantiation, so the timed kernels' code is
// unchanged): thread 0 of each consumer WG records %globaltimer at three points of each of its
// tiles, outside the k-block loop: mainloop start (after the turn wait, before wgmma.fence),
// mainloop end (after wgmma.wait_group 0) and epilogue end (after its last TMA store's commit),
// at phases[((cta * 2 + wg) * phase_tiles + j) * kPhaseSlots + 0..2]. Slots 3.. hold the same
// thread's clock64 stamps, for --chunk-log: the mainloop start and end, the epilogue's start (after
// the empty arrive and the turn wait) and, per epilogue chunk i, after its wait_group.read, after
// its first bar.sync, after its second (before the TMA store) and after the store's commit. The
// stamps go to SMEM (st.shared, a few cycles: global stores there slowed each chunk by ~30 cycles)
// and are copied out after the tile's epilogue end.
template <bool kCoop, int kRows, int kBN, bool kPhases>
__global__ void __launch_bounds__(384, 1)
    k_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
           const __grid_constant__ CUtensorMap tmD, const GemmParams p, long long* tim, long long* tile_log,
           long long* phases) {
  using C = Cfg<kCoop, kRows, kBN>;
  if (threadIdx.x == 0) {
    tim[blockIdx.x * kTimSlots + 0] = static_cast<long long>(globaltimer());
    tim[blockIdx.x * kTimSlots + 1] = clock64();
    tim[blockIdx.x * kTimSlots + 6] = sm_id();
    if (tile_log) tile_log[blockIdx.x * log_stride(p)] = sm_id();
  }
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
  const unsigned S = p.stages;
  const unsigned epi0 = base + S * C::kStageBytes;
  const unsigned bars = epi0 + kEpiBytes;
  auto stage_a = [&](unsigned s) { return base + s * C::kStageBytes; };
  auto full = [&](unsigned s) { return bars + 8 * s; };
  auto empty = [&](unsigned s) { return bars + 8 * (S + s); };
  auto mma_turn = [&](unsigned g) { return bars + 8 * (2 * S + g); };
  auto epi_turn = [&](unsigned g) { return bars + 8 * (2 * S + 2 + g); };
  const unsigned stamps = bars + 8 * (2 * S + 4);  // --chunk-log: kStampSlots per consumer WG
  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < S; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 4 * C::kReaders);
    }
    for (unsigned g = 0; g < 2; ++g) {
      mbar_init(mma_turn(g), 4);
      mbar_init(epi_turn(g), 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    fence_proxy_async();
  }
  __syncthreads();
  const unsigned tiles = p.tiles_m * p.tiles_n;
  // Broadcast from lane 0 so that ptxas sees the warpgroup index (and every branch on it) as
  // warp-uniform; otherwise the pingpong tile loop counts as divergent and ptxas serializes wgmma.
  const unsigned wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
  if (wg == 0) {
    // ---------------- producer ----------------
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x == 0) {
      PipeState st;
      unsigned j = 0;
      long long path_sum = 0, path_count = 0;  // kPhases: the k-blocks' empty-wait-to-load paths
      for (unsigned t = (blockIdx.x + p.rotate) % gridDim.x; t < tiles; t += gridDim.x, ++j) {
        unsigned m, n;
        tile_of(p, t, m, n);
        for (unsigned kb = 0; kb < p.k_tiles; ++kb) {
          mbar_wait(empty(st.idx), st.phase ^ 1);
          [[maybe_unused]] const long long resumed = kPhases ? clock64() : 0;
          log_issue(tile_log, p, j, kb);  // when the tile's (k-block's) loads go out
          mbar_arrive_expect_tx(full(st.idx), C::kStageBytes);
          const unsigned a = stage_a(st.idx);
          if (kPhases) path_sum += clock64() - resumed, ++path_count;
          tma_load_2d(a, &tmA, static_cast<int>(kb * 64), static_cast<int>(m * C::BM), full(st.idx));
          tma_load_2d(a + C::kABytes, &tmB, static_cast<int>(kb * 64), static_cast<int>(n * C::BN), full(st.idx));
          st.advance(S);
        }
      }
      if (kPhases) {
        phases[path_slot(p, gridDim.x, blockIdx.x, 0)] = path_sum;
        phases[path_slot(p, gridDim.x, blockIdx.x, 1)] = path_count;
      }
    }
  } else {
    // ---------------- consumers ----------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const unsigned g = wg - 1;
    const unsigned t128 = threadIdx.x % 128, warp = t128 / 32, lane = t128 % 32;
    const unsigned r0 = kCoop ? g * kRows : 0;
    float acc[C::F][kBN / 2];
#pragma unroll
    for (int f = 0; f < C::F; ++f)
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) acc[f][i] = 0.f;
    PipeState st;
    if (!kCoop && g == 1) st.advance_by(p.k_tiles, S);
    const unsigned worker = (blockIdx.x + p.rotate) % gridDim.x;  // --rotate; blockIdx.x by default
    const unsigned first = kCoop ? worker : worker + g * gridDim.x;
    const unsigned step = kCoop ? gridDim.x : 2 * gridDim.x;
    unsigned q = 0, mma_par = 0, epi_par = 0, mine = 0;
    long long path_sum = 0, path_count = 0;  // kPhases: the k-blocks' full-wait-to-wgmma paths (thread 0)
    auto phase = [&](unsigned point) {
      if (kPhases && t128 == 0 && mine < p.phase_tiles)
        phases[((blockIdx.x * 2 + g) * p.phase_tiles + mine) * kPhaseSlots + point] = static_cast<long long>(globaltimer());
    };
    auto stamp = [&](unsigned slot) {  // --chunk-log: the SM's clock into the WG's SMEM slot
      if (kPhases && t128 == 0)
        asm volatile("st.shared.u64 [%0], %1;" ::"r"(stamps + 8 * (g * kStampSlots + slot)), "l"(clock64()) : "memory");
    };
    auto copy_stamps = [&]() {  // after the tile's epilogue end
      if (kPhases && t128 == 0 && mine < p.phase_tiles)
        for (unsigned s2 = 0; s2 < kStampSlots; ++s2) {
          unsigned long long v;
          asm volatile("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(stamps + 8 * (g * kStampSlots + s2)) : "memory");
          phases[((blockIdx.x * 2 + g) * p.phase_tiles + mine) * kPhaseSlots + 3 + s2] = static_cast<long long>(v);
        }
    };
    for (unsigned t = first; t < tiles; t += step, ++mine) {
      unsigned m, n;
      tile_of(p, t, m, n);
      const bool wait_turn = !kCoop && !(g == 0 && mine == 0);
      // ---- mainloop ----
      if (wait_turn) {
        mbar_wait(mma_turn(g), mma_par);
        mma_par ^= 1;
      }
      phase(0);
      stamp(0);
#pragma unroll
      for (int f = 0; f < C::F; ++f) fence_regs(acc[f]);
      wgmma_fence();
      unsigned prev = 0;
      for (unsigned kb = 0; kb < p.k_tiles; ++kb) {
        mbar_wait(full(st.idx), st.phase);
        [[maybe_unused]] const long long resumed = kPhases ? clock64() : 0;
        const unsigned a = stage_a(st.idx), b = a + C::kABytes;
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const uint64_t db = gmma_desc(b + kk * 32);
          const uint32_t scale = (kb > 0 || kk > 0) ? 1u : 0u;
#pragma unroll
          for (int f = 0; f < C::F; ++f) {
            Wgmma<kBN>::ss(acc[f], gmma_desc(a + (r0 + 64 * f) * 128 + kk * 32), db, scale);
            // After the first wgmma's issue: asm statements keep their order, so the stretch holds its
            // descriptors' arithmetic (a clock read before it was hoisted above that arithmetic).
            if constexpr (kPhases)
              if (kk == 0 && f == 0 && t128 == 0) path_sum += clock64() - resumed, ++path_count;
          }
        }
        wgmma_commit();
        if (kb > 0) {
          wgmma_wait<1>();
          if (lane == 0) mbar_arrive(empty(prev));
        }
        prev = st.idx;
        st.advance(S);
      }
      if (!kCoop && lane == 0) mbar_arrive(mma_turn(1 - g));
      wgmma_wait<0>();
#pragma unroll
      for (int f = 0; f < C::F; ++f) fence_regs(acc[f]);
      phase(1);
      stamp(1);
      if (p.k_tiles > 0 && lane == 0) mbar_arrive(empty(prev));
      if (!kCoop) st.advance_by(p.k_tiles, S);
      // ---- epilogue ----
      if (wait_turn) {
        mbar_wait(epi_turn(g), epi_par);
        epi_par ^= 1;
      }
      stamp(2);
#pragma unroll
      for (int f = 0; f < (kPhases && p.no_epilogue ? 0 : C::F); ++f) {
#pragma unroll
        for (int c = 0; c < C::kChunks; ++c) {
          const unsigned buf = epi0 + (2 * g + (q & 1)) * 8192;
          if (t128 == 0) bulk_wait_read_1();
          const unsigned i = f * C::kChunks + c;  // the chunk's place in the tile's epilogue
          stamp(3 + 4 * i);
          named_bar(1 + g);
          stamp(4 + 4 * i);
          const unsigned row = 16 * warp + lane / 4;  // and row + 8
#pragma unroll
          for (int jj = 0; jj < 8; ++jj) {
            const int j = 8 * c + jj;                        // register group 4j..4j+3
            const unsigned col = 8 * jj + 2 * (lane % 4);    // column inside the chunk
            const unsigned off_lo = row * 128 + (((col / 8) ^ (row % 8)) * 16) + (col % 8) * 2;
            const unsigned off_hi = (row + 8) * 128 + (((col / 8) ^ ((row + 8) % 8)) * 16) + (col % 8) * 2;
            asm volatile("st.shared.b32 [%0], %1;" ::"r"(buf + off_lo),
                         "r"(pack_bf16x2(acc[f][4 * j], acc[f][4 * j + 1]))
                         : "memory");
            asm volatile("st.shared.b32 [%0], %1;" ::"r"(buf + off_hi),
                         "r"(pack_bf16x2(acc[f][4 * j + 2], acc[f][4 * j + 3]))
                         : "memory");
          }
          fence_proxy_async();
          named_bar(1 + g);
          stamp(5 + 4 * i);
          if (t128 == 0) {
            tma_store_2d(&tmD, buf, static_cast<int>(n * C::BN + 64 * c), static_cast<int>(m * C::BM + r0 + 64 * f));
            bulk_commit();
          }
          stamp(6 + 4 * i);
          ++q;
        }
      }
      phase(2);
      copy_stamps();
      if (!kCoop) {
        named_bar(1 + g);
        if (lane == 0) mbar_arrive(epi_turn(1 - g));
      }
    }
    if (t128 == 0) {
      bulk_wait_0();
      tim[blockIdx.x * kTimSlots + 2 + 2 * g] = static_cast<long long>(globaltimer());
      tim[blockIdx.x * kTimSlots + 3 + 2 * g] = clock64();
      if (kPhases) {
        phases[path_slot(p, gridDim.x, blockIdx.x, 2 + 2 * g)] = path_sum;
        phases[path_slot(p, gridDim.x, blockIdx.x, 3 + 2 * g)] = path_count;
      }
    }
  }
}

// ---- check kernels ------------------------------------------------------------------------
__global__ void k_fill(__nv_bfloat16* p, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint32_t h = hash32(static_cast<uint32_t>(i) * 2654435761u ^ hash32(seed + static_cast<uint32_t>(i >> 32)));
    p[i] = __float2bfloat16_rn(static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}
__global__ void k_ref(const __nv_bfloat16* A, const __nv_bfloat16* B, float* R, int M, int N, int K) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  const __nv_bfloat16* a = A + static_cast<size_t>(m) * K;
  const __nv_bfloat16* b = B + static_cast<size_t>(n) * K;
  float s = 0.f;
  for (int k = 0; k < K; ++k) s += __bfloat162float(a[k]) * __bfloat162float(b[k]);
  R[static_cast<size_t>(m) * N + n] = s;
}

// ---- host -----------------------------------------------------------------------------------
// 2D bf16 map of a rows x cols matrix (cols contiguous), box {box_cols, box_rows}.
CUtensorMap make_map(void* base, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols,
                     CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const EncodeFn encode = encode_tiled();
  CUtensorMap m;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * 2};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, estr,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d): rows %llu cols %llu box %u x %u\n", static_cast<int>(r),
                 static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), box_rows, box_cols);
    std::exit(1);
  }
  return m;
}

struct Args {
  int m = 4096, n = 4096, k = 4096;
  bool coop = true;
  int rows = 64, tile_n = 256, stages = 0;
  bool raster_m = true;
  int swizzle = 1, grid = 0, reps = 10, check = 0;
  int sustain_ms = 0;
  int sleep_ms = 20;  // --sleep-ms T: the host's sleep before each timed launch
  bool header = false;
  int rotate = 0;
  // --promotion 128|256: the operand maps' L2 promotion (bytes). A diagnostic: the result row does
  // not record it, and bwsim compare reads every row as 256B, so 128B rows stay out of the
  // validation CSVs (run_gemm_clocks.sh keeps them apart by the launches' kind).
  int promotion = 256;
  std::string clock_log;  // --clock-log FILE: each CTA's SM, span and clock (FILE.rN with --log-reps 1)
  std::string tile_log;  // --tile-log FILE: each CTA's SM and its tiles' start times (last timed launch)
  bool log_reps = false;  // --log-reps 1: a tile log of every timed launch, FILE.r2, FILE.r3, ...
  bool kb_log = false;    // --kb-log 1: the tile log has every k-block's issue, not only each tile's first
  std::string phase_log;  // --phase-log FILE: each consumer WG's tile phases (last timed launch)
  bool no_epilogue = false;  // --no-epilogue: with --phase-log, tiles without their epilogue's stores (D unwritten)
  std::string chunk_log;  // --chunk-log FILE: with --phase-log, each epilogue chunk's steps (clock64)
  std::string path_log;   // --path-log FILE: with --phase-log, each role's wait-to-issue path (clock64)
};

static float bf16_bits_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// --sustain-ms: back-to-back launches for a.sustain_ms ms in batches of ~20 ms; prints the
// "sustained" row (see the file's header) and each batch to stderr. `launch` enqueues one GEMM;
// `span_and_clock(span_ns, mhz)` reads the last launch's span and clock.
template <class LaunchFn, class SpanFn>
int sustain(const Args& a, LaunchFn&& launch, SpanFn&& span_and_clock, cudaEvent_t e0, cudaEvent_t e1,
            const std::string& check) {
  struct Batch {
    double end_s, ms, mhz;
    int gemms;
    unsigned long long energy_mj;
  };
  Nvml nvml;
  Sampler sampler(nvml, 50);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaEventRecord(e0));  // one launch sizes the batches
  launch();
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  float one_ms = 0;
  CHECK(cudaEventElapsedTime(&one_ms, e0, e1));
  const int per_batch = std::max(1, static_cast<int>(20.0f / std::max(one_ms, 1e-3f)));
  std::vector<Batch> batches;
  const double t0 = now_s();
  const unsigned long long energy0 = nvml.energy_mj();
  while (now_s() - t0 < a.sustain_ms * 1e-3) {
    CHECK(cudaEventRecord(e0));
    for (int i = 0; i < per_batch; ++i) launch();
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    double span = 0, mhz = 0;
    span_and_clock(span, mhz);
    batches.push_back({now_s() - t0, ms, mhz, per_batch, nvml.energy_mj()});
    const unsigned long long before = batches.size() > 1 ? batches[batches.size() - 2].energy_mj : energy0;
    const double before_s = batches.size() > 1 ? batches[batches.size() - 2].end_s : 0.0;
    std::fprintf(stderr, "batch,%.4f,%.2f,%.0f,%.1f\n", batches.back().end_s, 1000.0 * ms / per_batch, mhz,
                 static_cast<double>(batches.back().energy_mj - before) / 1000.0 / (batches.back().end_s - before_s));
  }
  for (const Sampler::Sample& s : sampler.between(t0, now_s()))
    std::fprintf(stderr, "sample,%.4f,%u,%.1f,%u,%llx\n", s.t_s - t0, s.sm_mhz, s.power_w, s.temp_c, s.reasons);
  // The steady window: batches ending in the last half.
  const double half = 0.5 * a.sustain_ms * 1e-3;
  size_t first = 0;
  while (first + 1 < batches.size() && batches[first].end_s < half) ++first;
  double ms = 0, mhz = 0;
  int gemms = 0;
  for (size_t i = first; i < batches.size(); ++i) {
    ms += batches[i].ms;
    mhz += batches[i].mhz;
    gemms += batches[i].gemms;
  }
  mhz /= static_cast<double>(batches.size() - first);
  const double start_s = first ? batches[first - 1].end_s : 0.0;
  const unsigned long long start_mj = first ? batches[first - 1].energy_mj : energy0;
  const double watts =
      static_cast<double>(batches.back().energy_mj - start_mj) / 1000.0 / (batches.back().end_s - start_s);
  const double us = 1000.0 * ms / gemms;
  std::printf("sustained,%d,%d,%d,%s,%d,%d,%d,%d,%zu,%.2f,%.0f,%.0f,%.1f,%.2f,%.0f,%s\n", a.m, a.n, a.k,
              a.coop ? "cooperative" : "pingpong", a.rows, a.tile_n, a.sustain_ms, gemms,
              batches.size() - first, us, mhz, us * mhz, watts, 1000.0 * batches[0].ms / batches[0].gemms,
              batches[0].mhz, check.c_str());
  std::fflush(stdout);
  return check == "FAIL" ? 2 : 0;
}

// --tile-log: one row per tile a CTA started in the last timed launch: the CTA, its SM, the
// tile's index in the CTA's sequence, (m, n), and when its first loads were issued (ns after the
// launch's first start, and in cycles at the launch's clock); with --kb-log 1, one row per k-block
// of each tile (a kb column before the times: when that k-block's loads were issued).
void write_tile_log(const std::string& path, const GemmParams& p, int grid, const long long* dev, double mhz) {
  const unsigned stride = log_stride(p);
  std::vector<long long> h(static_cast<size_t>(grid) * stride);
  CHECK(cudaMemcpy(h.data(), dev, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  const unsigned tiles = p.tiles_m * p.tiles_n;
  auto first_start = [&](int c) { return h[static_cast<size_t>(c) * stride + 1]; };
  long long t0 = -1;
  for (int c = 0; c < grid; ++c)
    if (first_start(c) > 0 && (t0 < 0 || first_start(c) < t0)) t0 = first_start(c);
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  const bool per_kb = p.log_kblocks != 0;
  std::fprintf(f, "# clock_mhz,%.0f\ncta,smid,j,tile,m,n,%sstart_ns,start_cycles\n", mhz, per_kb ? "kb," : "");
  for (int c = 0; c < grid; ++c) {
    const long long* v = &h[static_cast<size_t>(c) * stride];
    unsigned j = 0;
    for (unsigned t = (static_cast<unsigned>(c) + p.rotate) % grid; t < tiles && j < p.log_tiles; t += grid, ++j) {
      unsigned m, n;
      tile_of(p, t, m, n);
      for (unsigned kb = 0; kb < log_per_tile(p); ++kb) {
        const long long ns = v[1 + j * log_per_tile(p) + kb] - t0;
        if (per_kb)
          std::fprintf(f, "%d,%lld,%u,%u,%u,%u,%u,%lld,%.0f\n", c, v[0], j, t, m, n, kb, ns, ns * mhz / 1000.0);
        else
          std::fprintf(f, "%d,%lld,%u,%u,%u,%u,%lld,%.0f\n", c, v[0], j, t, m, n, ns, ns * mhz / 1000.0);
      }
    }
  }
  std::fclose(f);
}

// --clock-log: one row per CTA of a timed launch: its SM, when it started and its later WG ended
// (%globaltimer ns after the launch's first start), and the clock64 cycles between the two, so
// the clock each SM ran at (cycles / ns) can be compared across SMs and GPCs.
void write_clock_log(const std::string& path, int grid, const std::vector<long long>& ht) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  long long t0 = ht[0];
  for (int c = 0; c < grid; ++c) t0 = std::min(t0, ht[static_cast<size_t>(c) * kTimSlots]);
  std::fprintf(f, "cta,smid,start_ns,end_ns,cycles,mhz\n");
  for (int c = 0; c < grid; ++c) {
    const long long* v = &ht[static_cast<size_t>(c) * kTimSlots];
    const int w = v[4] > v[2] ? 1 : 0;
    const long long ns = v[2 + 2 * w] - v[0], cycles = v[3 + 2 * w] - v[1];
    std::fprintf(f, "%d,%lld,%lld,%lld,%lld,%.2f\n", c, v[6], v[0] - t0, v[2 + 2 * w] - t0, cycles,
                 ns > 0 ? cycles * 1000.0 / ns : 0.0);
  }
  std::fclose(f);
}

// --phase-log: one row per tile of each consumer WG in the last timed launch: the CTA, the WG, the
// tile's index in the WG's sequence, the CTA's start and the tile's mainloop start, mainloop end
// and epilogue end, in cycles (at the launch's clock) after the launch's first CTA start.
// --chunk-log: one row per epilogue chunk of each of those tiles: the tile's mainloop start (SM
// cycles after its CTA's first clock64: the prologue, for j = 0), and in SM cycles after the tile's
// mainloop end (clock64 of thread 0 of the WG): the epilogue's start (after the empty arrive and
// the turn wait), and when the chunk's wait_group.read, first bar.sync, second bar.sync and TMA
// store + commit had passed.
void write_phase_log(const std::string& path, const std::string& chunk_path, unsigned chunks, const GemmParams& p,
                     int grid, const long long* dev, const std::vector<long long>& tim, double mhz) {
  std::vector<long long> h(static_cast<size_t>(grid) * 2 * p.phase_tiles * kPhaseSlots, 0);
  CHECK(cudaMemcpy(h.data(), dev, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  long long t0 = tim[0];
  for (int c = 0; c < grid; ++c) t0 = std::min(t0, tim[static_cast<size_t>(c) * kTimSlots]);
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  auto cyc = [&](long long ns) { return static_cast<double>(ns - t0) * mhz / 1000.0; };
  std::fprintf(f, "# clock_mhz,%.0f\ncta,wg,j,cta_start,ml_start,ml_end,epi_end\n", mhz);
  for (int c = 0; c < grid; ++c)
    for (unsigned g = 0; g < 2; ++g)
      for (unsigned j = 0; j < p.phase_tiles; ++j) {
        const long long* v = &h[((static_cast<size_t>(c) * 2 + g) * p.phase_tiles + j) * kPhaseSlots];
        if (v[0] == 0) continue;  // the WG had fewer tiles
        std::fprintf(f, "%d,%u,%u,%.0f,%.0f,%.0f,%.0f\n", c, g, j, cyc(tim[static_cast<size_t>(c) * kTimSlots]), cyc(v[0]),
                     cyc(v[1]), cyc(v[2]));
      }
  std::fclose(f);
  if (chunk_path.empty()) return;
  FILE* cf = std::fopen(chunk_path.c_str(), "w");
  if (!cf) {
    std::fprintf(stderr, "cannot write %s\n", chunk_path.c_str());
    return;
  }
  std::fprintf(cf, "# clock_mhz,%.0f\ncta,wg,j,ml_start,epi_start,chunk,waited,synced,staged,issued\n", mhz);
  for (int c = 0; c < grid; ++c)
    for (unsigned g = 0; g < 2; ++g)
      for (unsigned j = 0; j < p.phase_tiles; ++j) {
        const long long* v = &h[((static_cast<size_t>(c) * 2 + g) * p.phase_tiles + j) * kPhaseSlots];
        if (v[0] == 0) continue;
        for (unsigned i = 0; i < chunks; ++i)
          std::fprintf(cf, "%d,%u,%u,%lld,%lld,%u,%lld,%lld,%lld,%lld\n", c, g, j, v[3] - tim[static_cast<size_t>(c) * kTimSlots + 1],
                       v[5] - v[4], i, v[6 + 4 * i] - v[4], v[7 + 4 * i] - v[4], v[8 + 4 * i] - v[4], v[9 + 4 * i] - v[4]);
      }
  std::fclose(cf);
}

// --path-log: per CTA of the last timed launch, the mean cycles of the producer's path from an
// empty barrier's wait returning to its k-block's first TMA load, and of each consumer WG's from a
// full barrier's wait returning to its k-block's first wgmma having issued (path_slot).
void write_path_log(const std::string& path, const GemmParams& p, int grid, const long long* dev) {
  std::vector<long long> h(static_cast<size_t>(grid) * kPathSlots);
  CHECK(cudaMemcpy(h.data(), dev + path_slot(p, grid, 0, 0), h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "cta,producer_cycles,wg0_cycles,wg1_cycles,kblocks\n");
  auto mean = [](long long sum, long long n) { return n ? static_cast<double>(sum) / static_cast<double>(n) : 0.0; };
  for (int c = 0; c < grid; ++c) {
    const long long* v = &h[static_cast<size_t>(c) * kPathSlots];
    std::fprintf(f, "%d,%.1f,%.1f,%.1f,%lld\n", c, mean(v[0], v[1]), mean(v[2], v[3]), mean(v[4], v[5]), v[1]);
  }
  std::fclose(f);
}

template <bool kCoop, int kRows, int kBN>
int run(const Args& a, int sms) {
  using C = Cfg<kCoop, kRows, kBN>;
  const int S = a.stages > 0 ? a.stages : C::max_stages();
  const size_t smem = C::smem_bytes(S);
  if (smem > static_cast<size_t>(kSmemOptInMax) || S > kMaxStages) {
    std::fprintf(stderr, "stages %d need %zu B of SMEM (max %d)\n", S, smem, kSmemOptInMax);
    return 1;
  }
  GemmParams p;
  p.M = a.m;
  p.N = a.n;
  p.K = a.k;
  p.tiles_m = (a.m + C::BM - 1) / C::BM;
  p.tiles_n = (a.n + C::BN - 1) / C::BN;
  p.k_tiles = (a.k + 63) / 64;
  p.stages = S;
  p.raster_m = a.raster_m ? 1 : 0;
  p.swizzle = a.swizzle;
  const unsigned tiles = p.tiles_m * p.tiles_n;
  const int grid = a.grid > 0 ? a.grid : static_cast<int>(std::min<unsigned>(tiles, sms));
  p.log_tiles = a.tile_log.empty() ? 0 : (tiles + grid - 1) / grid;
  p.log_kblocks = a.kb_log ? 1 : 0;
  p.rotate = static_cast<unsigned>(a.rotate % grid);
  p.phase_tiles = a.phase_log.empty() ? 0 : (tiles + grid - 1) / grid;
  p.no_epilogue = a.no_epilogue && p.phase_tiles ? 1 : 0;

  __nv_bfloat16 *A, *B, *D;
  const size_t na = static_cast<size_t>(a.m) * a.k, nb = static_cast<size_t>(a.n) * a.k,
               nd = static_cast<size_t>(a.m) * a.n;
  CHECK(cudaMalloc(&A, na * 2));
  CHECK(cudaMalloc(&B, nb * 2));
  CHECK(cudaMalloc(&D, nd * 2));
  k_fill<<<1024, 256>>>(A, na, 1u);
  k_fill<<<1024, 256>>>(B, nb, 2u);
  CHECK(cudaGetLastError());
  const CUtensorMapL2promotion promotion =
      a.promotion == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  const CUtensorMap tmA = make_map(A, a.m, a.k, C::BM, 64, promotion);
  const CUtensorMap tmB = make_map(B, a.n, a.k, C::BN, 64, promotion);
  const CUtensorMap tmD = make_map(D, a.m, a.n, 64, 64);
  long long* tim;
  CHECK(cudaMalloc(&tim, static_cast<size_t>(grid) * kTimSlots * sizeof(long long)));
  long long* tile_log = nullptr;
  const size_t log_count = static_cast<size_t>(grid) * log_stride(p);
  if (p.log_tiles) CHECK(cudaMalloc(&tile_log, log_count * sizeof(long long)));
  long long* phases = nullptr;
  const size_t phase_count = static_cast<size_t>(grid) * (2 * p.phase_tiles * kPhaseSlots + kPathSlots);
  if (p.phase_tiles) {
    CHECK(cudaMalloc(&phases, phase_count * sizeof(long long)));
    CHECK(cudaMemset(phases, 0, phase_count * sizeof(long long)));
  }
  auto kern = p.phase_tiles ? k_gemm<kCoop, kRows, kBN, true> : k_gemm<kCoop, kRows, kBN, false>;
  CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  auto launch = [&]() {
    kern<<<grid, 384, smem>>>(tmA, tmB, tmD, p, tim, tile_log, phases);
    CHECK(cudaGetLastError());
  };

  std::string check = "skip";
  if (a.check) {
    CHECK(cudaMemset(D, 0xFF, nd * 2));
    launch();
    CHECK(cudaDeviceSynchronize());
    float* R;
    CHECK(cudaMalloc(&R, nd * sizeof(float)));
    dim3 blk(16, 16), grd((a.n + 15) / 16, (a.m + 15) / 16);
    k_ref<<<grd, blk>>>(A, B, R, a.m, a.n, a.k);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<uint16_t> hd(nd);
    std::vector<float> hr(nd);
    CHECK(cudaMemcpy(hd.data(), D, nd * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hr.data(), R, nd * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(R));
    const double abs_tol = 1e-2 * std::sqrt(a.k / 64.0);
    double max_err = 0, max_ratio = 0;
    size_t bad = 0, worst = 0;
    for (size_t i = 0; i < nd; ++i) {
      const double d = bf16_bits_to_float(hd[i]), r = hr[i];
      const double err = std::fabs(d - r), tol = std::ldexp(std::fabs(r), -7) + abs_tol;
      if (!(err <= tol)) ++bad;  // NaN (unwritten) counts as bad
      if (!(err <= max_err)) max_err = err;
      if (!(err / tol <= max_ratio)) {
        max_ratio = err / tol;
        worst = i;
      }
    }
    check = bad == 0 ? "PASS" : "FAIL";
    std::fprintf(stderr, "check %dx%dx%d %s %d/%d: max |D-ref| %.4g, max err/tol %.3g at (%zu,%zu), bad %zu -> %s\n",
                 a.m, a.n, a.k, kCoop ? "cooperative" : "pingpong", kRows, kBN, max_err, max_ratio,
                 worst / a.n, worst % a.n, bad, check.c_str());
  }

  struct Rep {
    double cycles, mhz, span_ns, event_ns;
  };
  std::vector<long long> ht(static_cast<size_t>(grid) * kTimSlots);
  // The last launch's span (first CTA start to last consumer end, %globaltimer ns) and SM clock
  // (clock64 / %globaltimer over the longest-lived CTA), from the CTAs' timestamps.
  auto span_and_clock = [&](double& span, double& mhz) {
    CHECK(cudaMemcpy(ht.data(), tim, ht.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    long long t_start = ht[0], t_end = 0, life = -1;
    mhz = 0;
    for (int c = 0; c < grid; ++c) {
      const long long* v = &ht[static_cast<size_t>(c) * kTimSlots];
      t_start = std::min(t_start, v[0]);
      const int w = v[4] > v[2] ? 1 : 0;  // the CTA's later consumer WG
      const long long end_ns = v[2 + 2 * w], end_clk = v[3 + 2 * w];
      t_end = std::max(t_end, end_ns);
      if (end_ns - v[0] > life) {
        life = end_ns - v[0];
        mhz = life > 0 ? static_cast<double>(end_clk - v[1]) / (static_cast<double>(life) / 1000.0) : 0.0;
      }
    }
    span = static_cast<double>(t_end - t_start);
  };
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  if (a.sustain_ms > 0) {
    const int rc = sustain(a, launch, span_and_clock, e0, e1, check);
    CHECK(cudaFree(A));
    CHECK(cudaFree(B));
    CHECK(cudaFree(D));
    CHECK(cudaFree(tim));
    return rc;
  }
  std::vector<Rep> reps;
  for (int r = 0; r < 2 + a.reps; ++r) {
    CHECK(cudaDeviceSynchronize());
    if (r >= 2) std::this_thread::sleep_for(std::chrono::milliseconds(a.sleep_ms));
    CHECK(cudaEventRecord(e0));
    launch();
    CHECK(cudaEventRecord(e1));
    CHECK(cudaDeviceSynchronize());
    if (r < 2) continue;
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    double span = 0, mhz = 0;
    span_and_clock(span, mhz);
    reps.push_back({span * mhz / 1000.0, mhz, span, ms * 1e6});
    std::fprintf(stderr, "# launch %d: %.0f cycles at %.0f MHz, span %.0f ns\n", r, reps.back().cycles, mhz, span);
    if (!a.clock_log.empty())
      write_clock_log(a.log_reps ? a.clock_log + ".r" + std::to_string(r) : a.clock_log, grid, ht);
    if (p.log_tiles && a.log_reps) write_tile_log(a.tile_log + ".r" + std::to_string(r), p, grid, tile_log, mhz);
  }
  if (p.log_tiles) write_tile_log(a.tile_log, p, grid, tile_log, reps.back().mhz);
  if (p.phase_tiles)
    write_phase_log(a.phase_log, a.chunk_log, p.no_epilogue ? 0 : C::F * C::kChunks, p, grid, phases, ht,
                    reps.back().mhz);
  if (p.phase_tiles && !a.path_log.empty()) write_path_log(a.path_log, p, grid, phases);
  std::sort(reps.begin(), reps.end(), [](const Rep& x, const Rep& y) { return x.cycles < y.cycles; });
  const Rep med = reps[reps.size() / 2];
  const double tflops = 2.0 * a.m * a.n * a.k / med.span_ns / 1000.0;
  std::printf("%d,%d,%d,%s,%d,%d,%d,%s,%d,%d,%.0f,%.0f,%.0f,%.0f,%.1f,%s\n", a.m, a.n, a.k,
              kCoop ? "cooperative" : "pingpong", kRows, kBN, S, a.raster_m ? "m" : "n", a.swizzle, grid, med.cycles,
              med.mhz, med.span_ns, med.event_ns, tflops, check.c_str());
  std::fflush(stdout);
  CHECK(cudaFree(A));
  CHECK(cudaFree(B));
  CHECK(cudaFree(D));
  CHECK(cudaFree(tim));
  if (tile_log) CHECK(cudaFree(tile_log));
  if (phases) CHECK(cudaFree(phases));
  return check == "FAIL" ? 2 : 0;
}

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value for %s\n", k.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (k == "--m") a.m = std::stoi(val());
    else if (k == "--n") a.n = std::stoi(val());
    else if (k == "--k") a.k = std::stoi(val());
    else if (k == "--schedule") {
      const std::string v = val();
      if (v != "cooperative" && v != "pingpong") {
        std::fprintf(stderr, "bad --schedule %s\n", v.c_str());
        return 1;
      }
      a.coop = v == "cooperative";
    } else if (k == "--rows-per-wg") a.rows = std::stoi(val());
    else if (k == "--tile-n") a.tile_n = std::stoi(val());
    else if (k == "--stages") a.stages = std::stoi(val());
    else if (k == "--raster") a.raster_m = val() != "n";
    else if (k == "--swizzle") a.swizzle = std::stoi(val());
    else if (k == "--grid") a.grid = std::stoi(val());
    else if (k == "--reps") a.reps = std::stoi(val());
    else if (k == "--check") a.check = std::stoi(val());
    else if (k == "--sustain-ms") a.sustain_ms = std::stoi(val());
    else if (k == "--sleep-ms") a.sleep_ms = std::stoi(val());
    else if (k == "--promotion") {
      a.promotion = std::stoi(val());
      if (a.promotion != 128 && a.promotion != 256) {
        std::fprintf(stderr, "--promotion: 128 or 256\n");
        return 1;
      }
    }
    else if (k == "--header") a.header = true;
    else if (k == "--tile-log") a.tile_log = val();
    else if (k == "--clock-log") a.clock_log = val();
    else if (k == "--log-reps") a.log_reps = std::stoi(val()) != 0;
    else if (k == "--kb-log") a.kb_log = std::stoi(val()) != 0;
    else if (k == "--rotate") a.rotate = std::stoi(val());
    else if (k == "--phase-log") a.phase_log = val();
    else if (k == "--path-log") a.path_log = val();
    else if (k == "--no-epilogue") a.no_epilogue = true;
    else if (k == "--chunk-log") a.chunk_log = val();

    else {
      std::fprintf(stderr, "unknown argument %s\n", k.c_str());
      return 1;
    }
  }
  if (a.swizzle != 1 && a.swizzle != 2 && a.swizzle != 4 && a.swizzle != 8) {
    std::fprintf(stderr, "--swizzle must be 1, 2, 4 or 8\n");
    return 1;
  }
  if (a.rotate < 0) {
    std::fprintf(stderr, "--rotate must be >= 0\n");
    return 1;
  }
  if (!a.path_log.empty() && a.phase_log.empty()) {
    std::fprintf(stderr, "--path-log needs --phase-log (the instrumented kernel)\n");
    return 1;
  }
  if (a.m <= 0 || a.n <= 0 || a.k <= 0 || a.k % 8 || a.n % 8 || a.reps < 1) {
    std::fprintf(stderr, "need m, n, k > 0, k and n multiples of 8 (16-byte TMA strides), reps >= 1\n");
    return 1;
  }
  if (a.header && a.sustain_ms > 0)
    std::printf("kind,m,n,k,schedule,rows_per_wg,tile_n,sustain_ms,gemms,batches,us_per_gemm,clock_mhz,cycles_per_gemm,"
                "power_w,first_us_per_gemm,first_clock_mhz,check\n");
  else if (a.header)
    std::printf("m,n,k,schedule,rows_per_wg,tile_n,stages,raster,swizzle,grid,cycles,clock_mhz,span_ns,event_ns,tflops,"
                "check\n");
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  if (a.rows == 64 && a.tile_n == 256) return a.coop ? run<true, 64, 256>(a, sms) : run<false, 64, 256>(a, sms);
  if (a.rows == 128 && a.tile_n == 128) return a.coop ? run<true, 128, 128>(a, sms) : run<false, 128, 128>(a, sms);
  std::fprintf(stderr, "unsupported (rows_per_wg, tile_n) = (%d, %d): use (64, 256) or (128, 128)\n", a.rows, a.tile_n);
  return 1;
}
