// h100_epilogue: what the parts of gemm_sm90_twin.cu's epilogue and prologue cost, one by one.
//
// Epilogue (k_epi): one CTA of 384 threads per SM, laid out as the twin's (WG0 the producer, which
// only gives up registers: setmaxnreg.dec 40; WG1, WG2 the consumers: setmaxnreg.inc 232). Each of
// W consumer warpgroups (W = 1, 2) runs kChunks chunks of the twin's epilogue chunk, or of some
// of its parts (template flags):
//   St    16 cvt.rn.bf16x2.f32 + 16 st.shared.b32 per thread (the chunk's 64 x 64 bf16, 8 KiB per
//         WG, at the twin's swizzled offsets) into buffer (2 g + chunk % 2) of 8 KiB
//   Fence fence.proxy.async.shared::cta by every thread after the stores
//   Bar   bar.sync 1+g, 128 before the stores and after the fence
//   Tma   thread 0 of the WG: cp.async.bulk.wait_group.read 1 before the first bar.sync, and a TMA
//         store of the 64 x 64 box + commit_group after the second (D: 1024 x 1024 bf16, L2-resident)
// Thread 0 of each WG reads clock64 after a bar.sync that lines its warps up and after the last
// chunk (before any final wait), so a row is the WG's cycles per chunk; the value is the median
// over CTAs of the slower WG's, x100, with 256 chunks per WG; grid G = 1 (one SM) and every SM.
// Rows: epilogue_<parts>_wg<W>_cycles_per_chunk_x100,<G>,<value>.
//
// Store order (k_store_order, one CTA): when each of k back-to-back 8 KiB TMA stores of one or two
// warps has read SMEM (wait_group.read) or been written (wait_group), whether the SM's store path
// serves them one after another or shares its rate among them. Rows:
// store_order_<read|write>_w<warps>_k<k>_store<i>_cycles,<warp>,<median over 8 launches>, and
// store_order_issue_w<warps>_k<k>_cycles,<warp>,<...>: when the warp had issued its k stores and
// commits (what a TMA store costs the issuing thread).
//
// Prologue (k_pro, one CTA): thread 0 reads clock64 around the twin's start-up steps: 12
// mbarrier.init (4 stages: full, empty, and 4 turn barriers), fence.mbarrier_init.release.cluster,
// fence.proxy.async.shared::cta, __syncthreads; thread 128 (a consumer) around setmaxnreg.inc 232
// after WG0's setmaxnreg.dec 40 and around its first read of a kernel parameter (the constant
// bank). clock64 is the SM's, so thread 0's and thread 128's readings compare.
// Rows: prologue_<step>_done_cycles,1,<median over 8 launches>: cycles from thread 0's first clock64
// to the step's end; param 2: the same after thread 0 first stores two timestamps to global memory,
// as the twin's kernel entry does (fence.proxy.async compiles to MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S:
// does it wait for those stores?).
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_epilogue.cu -lcuda
#include "calibration_ptx.cuh"

#include <string>

constexpr unsigned kChunks = 256;
constexpr unsigned kSt = 1, kFence = 2, kBar = 4, kTma = 8;
constexpr unsigned kEpiBytes = 4 * 8192;  // 2 WGs x 2 buffers

__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ void bulk_wait_read_1() { asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); }
__device__ __forceinline__ void named_bar(unsigned id) { asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory"); }

// The twin's epilogue chunk c (of 4): this thread's 16 cvt.rn.bf16x2.f32 of acc[32 c, 32 c + 32)
// and 16 st.shared.b32 at its swizzled offsets in the 64 x 64 bf16 chunk at `buf`.
__device__ __forceinline__ void store_chunk(unsigned buf, const float* acc, unsigned c, unsigned warp, unsigned lane) {
  const unsigned row = 16 * warp + lane / 4;
#pragma unroll
  for (int jj = 0; jj < 8; ++jj) {
    const int j = 8 * c + jj;
    const unsigned col = 8 * jj + 2 * (lane % 4);
    const unsigned off_lo = row * 128 + (((col / 8) ^ (row % 8)) * 16) + (col % 8) * 2;
    const unsigned off_hi = (row + 8) * 128 + (((col / 8) ^ ((row + 8) % 8)) * 16) + (col % 8) * 2;
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(buf + off_lo), "r"(pack_bf16x2(acc[4 * j], acc[4 * j + 1])) : "memory");
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(buf + off_hi), "r"(pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]))
                 : "memory");
  }
}

template <unsigned kParts>
__global__ void __launch_bounds__(384, 1)
    k_epi(const __grid_constant__ CUtensorMap tmD, unsigned wgs, unsigned long long* out, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned epi0 = (smem_addr(smem_raw) + 1023) & ~1023u;
  const unsigned wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  const unsigned g = wg - 1;
  if (g >= wgs) return;
  const unsigned t128 = threadIdx.x % 128, warp = t128 / 32, lane = t128 % 32;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = static_cast<float>(t128) * 0.5f + static_cast<float>(i);
  named_bar(1 + g);
  const unsigned long long t0 = clock64();
  for (unsigned q0 = 0; q0 < kChunks; q0 += 4)
#pragma unroll
    for (unsigned c = 0; c < 4; ++c) {  // unrolled, as the twin's: its registers are indexed statically
      const unsigned q = q0 + c;
      const unsigned buf = epi0 + (2 * g + (q & 1)) * 8192;
      if ((kParts & kTma) && t128 == 0) bulk_wait_read_1();
      if (kParts & kBar) named_bar(1 + g);
      if (kParts & kSt) store_chunk(buf, acc, c, warp, lane);
      if (kParts & kFence) fence_proxy_async();
      if (kParts & kBar) named_bar(1 + g);
      if ((kParts & kTma) && t128 == 0) {
        const unsigned box = (blockIdx.x * 2 + g) * 64 + q;
        tma_store_2d(&tmD, buf, static_cast<int>((box % 16) * 64), static_cast<int>((box / 16 % 16) * 64));
        bulk_commit();
      }
    }
  const unsigned long long t1 = clock64();
  if ((kParts & kTma) && t128 == 0) bulk_wait_0();
  if (t128 == 0) out[blockIdx.x * 2 + g] = t1 - t0;
  if (acc[lane] == -1.0f) sink[blockIdx.x] = 1;
}

struct Variant {
  const char* name;
  void (*kernel)(const __grid_constant__ CUtensorMap, unsigned, unsigned long long*, unsigned*);
};

double cycles_per_chunk(const Variant& v, const CUtensorMap& tmD, unsigned grid, unsigned wgs, unsigned long long* d_out,
                        unsigned* sink) {
  const unsigned smem = 1024 + kEpiBytes;
  CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::vector<unsigned long long> h(static_cast<size_t>(grid) * 2);
  for (int rep = 0; rep < 2; ++rep) {  // the first launch warms up
    CHECK(cudaMemset(d_out, 0, h.size() * sizeof(unsigned long long)));
    v.kernel<<<grid, 384, smem>>>(tmD, wgs, d_out, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaMemcpy(h.data(), d_out, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  std::vector<double> per_cta;
  for (unsigned c = 0; c < grid; ++c) per_cta.push_back(static_cast<double>(std::max(h[2 * c], h[2 * c + 1])) / kChunks);
  return median(per_cta);
}

// ---- prologue ----------------------------------------------------------------------------------
// Cycles after thread 0's first clock64 at which thread 0 has done each start-up step, and thread
// 128 (the first consumer) has passed the __syncthreads, its setmaxnreg.inc and its first read of
// a kernel parameter.
struct Prologue {
  long long init, fence_mbar_init, fence_proxy_async, syncthreads, consumer_synced, setmaxnreg_inc, first_param;
  unsigned long long c0;
};

__global__ void __launch_bounds__(384, 1) k_pro(Prologue* out, unsigned param, unsigned* sink, long long* stamps) {
  __shared__ __align__(8) unsigned long long bars[12];
  __shared__ unsigned long long start;
  if (threadIdx.x == 0) {
    const unsigned long long c0 = clock64();
    if (stamps) {  // the twin's kernel entry: thread 0 stores its start (%globaltimer, clock64)
      stamps[0] = static_cast<long long>(globaltimer());
      stamps[1] = static_cast<long long>(c0);
    }
    for (unsigned b = 0; b < 12; ++b) mbar_init(smem_addr(&bars[b]), b < 4 ? 1 : 8);
    const unsigned long long c1 = clock64();
    fence_mbar_init();
    const unsigned long long c2 = clock64();
    fence_proxy_async();
    const unsigned long long c3 = clock64();
    start = c0;
    out->c0 = c0;
    out->init = static_cast<long long>(c1 - c0);
    out->fence_mbar_init = static_cast<long long>(c2 - c0);
    out->fence_proxy_async = static_cast<long long>(c3 - c0);
  }
  __syncthreads();
  const unsigned long long synced = clock64();
  const unsigned wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x == 0) out->syncthreads = static_cast<long long>(synced - start);
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  const unsigned long long c5 = clock64();
  const unsigned v = param;  // the first read of a kernel parameter by this warp
  const unsigned long long c6 = clock64();
  if (v == 0xdeadbeefu) sink[0] = v;
  if (threadIdx.x == 128) {
    out->consumer_synced = static_cast<long long>(synced - start);
    out->setmaxnreg_inc = static_cast<long long>(c5 - start);
    out->first_param = static_cast<long long>(c6 - start);
  }
}

// ---- the epilogue beside other SMEM traffic ----------------------------------------------------
// One CTA (one SM): WG1 runs 256 chunks of some of the twin's epilogue chunk (no TMA store) while a
// background keeps another of the SM's SMEM users busy, both from one __syncthreads.
// WG1's parts (kPart*):
//   staging  the kernel's: 16 cvt + 16 st.shared.b32 per thread, fence.proxy.async, two bar.sync
//   st       16 cvt + 16 st.shared.b32 per thread only
//   cvt      16 cvt per thread only (their results folded into a register: no SMEM)
// Backgrounds:
//   none       nothing
//   wgmma256   WG2: wgmma.m64n256k16 bf16 SS back to back (one in flight behind wait_group 1):
//              A 64 x 16 and B 256 x 16 from SMEM, 10 KiB per 128 cycles at the tensor pipe's rate
//   wgmma64    WG2: wgmma.m64n64k16 SS the same way: 4 KiB per 32 cycles (the SMEM-bound shape)
//   wgmma256rs WG2: wgmma.m64n256k16 RS (A from registers): B's 8 KiB per 128 cycles
//   tma_store  WG0's thread 0: 8 KiB TMA stores of 4 SMEM buffers back to back (wait_group.read 3)
//   tma_load   WG0's thread 0: 8 KiB TMA loads (L2-resident boxes) into 4 SMEM buffers, 4 in flight
// Rows (param 1): epilogue_bg_<background>_<parts>_cycles_per_chunk_x100 (WG1's cycles per chunk),
// epilogue_bg_<background>_<parts>_op_cycles_x100 (the background's cycles per op over its first
// kBgProbe ops, all inside WG1's loop) and epilogue_bg_<background>_alone_op_cycles_x100 (WG1 idle).
constexpr unsigned kBgNone = 0, kBgWgmma256 = 1, kBgWgmma64 = 2, kBgWgmma256Rs = 3, kBgTmaStore = 4, kBgTmaLoad = 5;
constexpr unsigned kPartStaging = 0, kPartSt = 1, kPartCvt = 2, kPartIdle = 3;
constexpr unsigned kBgOps = 1024;   // longer than WG1's 256 chunks for each background
constexpr unsigned kBgProbe = 128;  // the background's rate is read over its first kBgProbe ops

// Thread 0 of the background's warpgroup (or warp) records its cycles over the first kBgProbe ops
// into out[4 * cta + 1].
__device__ __forceinline__ void bg_probe(unsigned i, unsigned long long t0, unsigned long long* out) {
  if (i + 1 == kBgProbe && threadIdx.x % 128 == 0) out[blockIdx.x * 4 + 1] = clock64() - t0;
}

// WG2's wgmma backgrounds.
template <unsigned kBg>
__device__ __forceinline__ void wgmma_background(unsigned epi0, unsigned bg0, unsigned long long* out, unsigned* sink) {
  constexpr unsigned kN = kBg == kBgWgmma64 ? 64 : 256;
  const unsigned t128 = threadIdx.x % 128, lane = t128 % 32;
  float d[kN / 2];
#pragma unroll
  for (int i = 0; i < static_cast<int>(kN / 2); ++i) d[i] = 0.f;
  const uint32_t a_regs[4] = {t128, t128 + 1, t128 + 2, t128 + 3};
  const uint64_t da = gmma_desc(epi0 + 2 * 8192);  // WG2's epilogue buffers: A, 64 rows x 128 B
  wgmma_fence();
  const unsigned long long t0 = clock64();
  for (unsigned i = 0; i < kBgOps; ++i) {
    const uint64_t db = gmma_desc(bg0 + (i % 4) * 32);  // B: N rows x 128 B, the i-th 16 of K
    const uint64_t da_k = da + (i % 4) * 2;            // +32 B (descriptor units of 16 B)
    if constexpr (kBg == kBgWgmma64)
      asm volatile(WG_SS_BF16(64, WG_ACC32, 32, 33, 34) : ACC_OPS_32(d) : "l"(da_k), "l"(db), "r"(1u));
    else if constexpr (kBg == kBgWgmma256Rs)
      asm volatile(WG_RS_BF16(256, WG_ACC128, 128, 129, 130, 131, 132, 133)
                   : ACC_OPS_128(d)
                   : "r"(a_regs[0]), "r"(a_regs[1]), "r"(a_regs[2]), "r"(a_regs[3]), "l"(db), "r"(1u));
    else
      asm volatile(WG_SS_BF16(256, WG_ACC128, 128, 129, 130) : ACC_OPS_128(d) : "l"(da_k), "l"(db), "r"(1u));
    wgmma_commit();
    wgmma_wait<1>();
    bg_probe(i, t0, out);
  }
  wgmma_wait<0>();
  fence_regs(d);
  if (d[lane] == -1.0f) sink[blockIdx.x] = 1;
}

// WG0's thread 0: the TMA backgrounds.
template <unsigned kBg>
__device__ __forceinline__ void tma_background(const CUtensorMap& tmD, unsigned bg0, unsigned bars,
                                               unsigned long long* out) {
  const unsigned long long t0 = clock64();
  for (unsigned i = 0; i < kBgOps; ++i) {
    const unsigned s = i % 4, box = blockIdx.x * 64 + i;
    if constexpr (kBg == kBgTmaStore) {
      asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory");
      tma_store_2d(&tmD, bg0 + s * 8192, static_cast<int>((box % 16) * 64), static_cast<int>((box / 16 % 16) * 64));
      bulk_commit();
      if (i + 1 == kBgProbe) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    } else {
      if (i >= 4) mbar_wait(bars + 8 * s, (i / 4 - 1) & 1);
      mbar_arrive_expect_tx(bars + 8 * s, 8192);
      tma_load_2d(bg0 + s * 8192, &tmD, static_cast<int>((box % 16) * 64), static_cast<int>((box / 16 % 16) * 64),
                  bars + 8 * s);
      if (i + 1 == kBgProbe) mbar_wait(bars + 8 * s, (i / 4) & 1);
    }
    bg_probe(i, t0, out);
  }
  if constexpr (kBg == kBgTmaStore) bulk_wait_0();
  if constexpr (kBg == kBgTmaLoad)
    for (unsigned i = kBgOps - 4; i < kBgOps; ++i) mbar_wait(bars + 8 * (i % 4), (i / 4) & 1);
}

// WG1: kChunks chunks of `kPart` (cycles into out[4 * cta]).
template <unsigned kPart>
__device__ __forceinline__ void measured_chunks(unsigned epi0, unsigned long long* out, unsigned* sink) {
  const unsigned t128 = threadIdx.x % 128, warp = t128 / 32, lane = t128 % 32;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = static_cast<float>(t128) * 0.5f + static_cast<float>(i);
  unsigned fold = 0;
  named_bar(1);
  const unsigned long long t0 = clock64();
  for (unsigned q0 = 0; q0 < kChunks; q0 += 4)
#pragma unroll
    for (unsigned c = 0; c < 4; ++c) {
      const unsigned buf = epi0 + ((q0 + c) & 1) * 8192;
      if constexpr (kPart == kPartStaging) named_bar(1);
      if constexpr (kPart == kPartCvt) {
#pragma unroll
        for (int j = 8 * c; j < 8 * c + 8; ++j)
          fold ^= pack_bf16x2(acc[4 * j], acc[4 * j + 1]) + pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
      } else {
        store_chunk(buf, acc, c, warp, lane);
      }
      if constexpr (kPart == kPartStaging) {
        fence_proxy_async();
        named_bar(1);
      }
      if constexpr (kPart == kPartCvt) {
#pragma unroll
        for (int i = 0; i < 32; ++i) acc[32 * c + i] += 1.0f;  // new inputs each chunk
      }
    }
  if (t128 == 0) out[blockIdx.x * 4] = clock64() - t0;
  if (acc[lane] == -1.0f || fold == 0x12345u) sink[blockIdx.x] = 1;
}

template <unsigned kBg, unsigned kPart>
__global__ void __launch_bounds__(384, 1)
    k_epi_bg(const __grid_constant__ CUtensorMap tmD, unsigned long long* out, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned epi0 = (smem_addr(smem_raw) + 1023) & ~1023u;
  const unsigned bg0 = epi0 + kEpiBytes;  // 4 x 8 KiB: the background's boxes, or wgmma's B (32 KiB)
  const unsigned bars = bg0 + 4 * 8192;   // 4 mbarriers for the loads
  const unsigned wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < 4; ++s) mbar_init(bars + 8 * s, 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if constexpr (kBg == kBgTmaStore || kBg == kBgTmaLoad)
      if (threadIdx.x == 0) tma_background<kBg>(tmD, bg0, bars, out);
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  if (wg == 2) {
    if constexpr (kBg == kBgWgmma256 || kBg == kBgWgmma64 || kBg == kBgWgmma256Rs)
      wgmma_background<kBg>(epi0, bg0, out, sink);
    return;
  }
  if constexpr (kPart != kPartIdle) measured_chunks<kPart>(epi0, out, sink);
}

// ---- the tile scheduler's arithmetic ----------------------------------------------------------
// One thread: a dependent chain of 1024 u32 divisions by a runtime divisor (x = x / d + 977, as
// the twin's tile index math compiles: I2F.U32.RP, MUFU.RCP, F2I, then the uniform datapath), and
// of 1024 calls of the twin's tile_of (two such divisions) fed back into the tile index.
// Rows: scalar_udiv_dependent_latency_x100,1,<cycles per division x100>,
// scalar_tile_of_dependent_latency_x100,1,<cycles per call x100> (4096^3, 128x256 tiles: 16 x 32).
__global__ void k_scalar(unsigned d, unsigned tiles_m, unsigned tiles_n, unsigned swizzle, long long* out) {
  unsigned x = threadIdx.x + 123456789u;
  long long t0 = clock64();
  for (unsigned i = 0; i < 1024; ++i) x = x / d + 977u;
  long long t1 = clock64();
  unsigned t = x % 7u;
  for (unsigned i = 0; i < 1024; ++i) {
    const unsigned fast = tiles_m, slow = tiles_n;  // raster along M, as the twin's default
    const unsigned band = t / (fast * swizzle);
    const unsigned width = swizzle < slow - band * swizzle ? swizzle : slow - band * swizzle;
    const unsigned j = t - band * fast * swizzle;
    const unsigned f = j / width, s = band * swizzle + j % width;
    t = (f + s + 1u) & 511u;
  }
  long long t2 = clock64();
  out[0] = t1 - t0;
  out[1] = t2 - t1;
  out[2] = x + t;  // keeps both chains
}

// ---- store order -------------------------------------------------------------------------------
// One CTA: `warps` warps (1 or 2) each issue `k` TMA stores of 8 KiB (64 x 64 bf16 boxes, L2-resident,
// each from its own SMEM buffer) back to back after a __syncthreads, then wait for them one by one:
// wait_group.read k-1-i (or wait_group k-1-i with kWrite) and a clock64 after each, so out[w * k + i]
// is when warp w's i-th store had read SMEM (been written), in cycles after the __syncthreads.
// FIFO service gives the i-th store done at (i + 1) x 8 KiB / rate + latency; a shared rate among
// the stores in flight gives them all done near the end.
template <bool kWrite>
__global__ void __launch_bounds__(64, 1) k_store_order(const __grid_constant__ CUtensorMap tmD, unsigned k,
                                                        long long* out) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  const long long t0 = clock64();
  if (lane == 0) {
    for (unsigned i = 0; i < k; ++i) {
      const unsigned box = warp * 8 + i;
      tma_store_2d(&tmD, base + box * 8192, static_cast<int>((box % 16) * 64), static_cast<int>((box / 16) * 64));
      bulk_commit();
    }
    out[2 * k + warp] = clock64() - t0;  // the k stores issued
    long long* o = out + warp * k;
    // wait_group N needs an immediate: k is 1, 2 or 4.
#define STORE_ORDER_WAIT(n)                                                                                         \
  if (k > (n)) {                                                                                                    \
    if (kWrite)                                                                                                     \
      asm volatile("cp.async.bulk.wait_group %0;" ::"n"(n) : "memory");                                            \
    else                                                                                                            \
      asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(n) : "memory");                                       \
    o[k - 1 - (n)] = clock64() - t0;                                                                                \
  }
    STORE_ORDER_WAIT(3)
    STORE_ORDER_WAIT(2)
    STORE_ORDER_WAIT(1)
    STORE_ORDER_WAIT(0)
#undef STORE_ORDER_WAIT
  }
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  unsigned long long* d_out;
  unsigned* sink;
  CHECK(cudaMalloc(&d_out, 2 * sms * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&sink, sms * sizeof(unsigned)));
  void* d;
  CHECK(cudaMalloc(&d, 1024 * 1024 * 2));
  CHECK(cudaMemset(d, 0, 1024 * 1024 * 2));
  const EncodeFn encode = encode_tiled();
  CUtensorMap tmD;
  {
    const cuuint64_t dims[2] = {1024, 1024};
    const cuuint64_t strides[1] = {1024 * 2};
    const cuuint32_t box[2] = {64, 64};
    const cuuint32_t estr[2] = {1, 1};
    if (encode(&tmD, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled failed\n");
      return 1;
    }
  }
  const Variant variants[] = {
      {"full", k_epi<kSt | kFence | kBar | kTma>}, {"no_fence", k_epi<kSt | kBar | kTma>},
      {"no_tma", k_epi<kSt | kFence | kBar>},      {"st_bar", k_epi<kSt | kBar>},
      {"st_fence", k_epi<kSt | kFence>},           {"st", k_epi<kSt>},
      {"fence_bar", k_epi<kFence | kBar>},         {"bar", k_epi<kBar>},
      {"fence", k_epi<kFence>},                    {"bar_tma", k_epi<kBar | kTma>},
  };
  std::printf("scenario,param,value\n");
  for (const unsigned grid : {1u, sms})
    for (const unsigned wgs : {1u, 2u})
      for (const Variant& v : variants)
        std::printf("epilogue_%s_wg%u_cycles_per_chunk_x100,%u,%.0f\n", v.name, wgs, grid,
                    100 * cycles_per_chunk(v, tmD, grid, wgs, d_out, sink));

  {
    long long* d_order;
    CHECK(cudaMalloc(&d_order, 16 * sizeof(long long)));
    const unsigned smem = 1024 + 16 * 8192;
    for (const bool write : {false, true}) {
      auto kern = write ? k_store_order<true> : k_store_order<false>;
      CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      for (const unsigned warps : {1u, 2u})
        for (const unsigned k : {1u, 2u, 4u}) {
          std::vector<std::vector<double>> done(warps * k), issued(warps);
          for (int rep = 0; rep < 9; ++rep) {
            kern<<<1, 32 * warps, smem>>>(tmD, k, d_order);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            std::vector<long long> h(2 * k + warps);
            CHECK(cudaMemcpy(h.data(), d_order, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            if (rep == 0) continue;  // warm-up (the boxes L2-resident, the descriptor cached)
            for (unsigned i = 0; i < warps * k; ++i) done[i].push_back(static_cast<double>(h[i]));
            for (unsigned w = 0; w < warps; ++w) issued[w].push_back(static_cast<double>(h[2 * k + w]));
          }
          for (unsigned w = 0; w < warps; ++w)
            for (unsigned i = 0; i < k; ++i)
              std::printf("store_order_%s_w%u_k%u_store%u_cycles,%u,%.0f\n", write ? "write" : "read", warps, k, i, w,
                          median(done[w * k + i]));
          if (!write)
            for (unsigned w = 0; w < warps; ++w)
              std::printf("store_order_issue_w%u_k%u_cycles,%u,%.0f\n", warps, k, w, median(issued[w]));
        }
    }
    CHECK(cudaFree(d_order));
  }
  {  // the epilogue beside other SMEM traffic
    using Kern = void (*)(const __grid_constant__ CUtensorMap, unsigned long long*, unsigned*);
    struct Bg {
      const char* name;
      Kern parts[4];  // staging, st, cvt, idle (WG1 idle: the background alone)
    };
#define EPI_BG(B) {k_epi_bg<B, kPartStaging>, k_epi_bg<B, kPartSt>, k_epi_bg<B, kPartCvt>, k_epi_bg<B, kPartIdle>}
    const Bg bgs[] = {{"none", EPI_BG(kBgNone)},           {"wgmma256", EPI_BG(kBgWgmma256)},
                      {"wgmma64", EPI_BG(kBgWgmma64)},     {"wgmma256rs", EPI_BG(kBgWgmma256Rs)},
                      {"tma_store", EPI_BG(kBgTmaStore)}, {"tma_load", EPI_BG(kBgTmaLoad)}};
#undef EPI_BG
    const char* part_names[4] = {"staging", "st", "cvt", "alone"};
    const unsigned smem = 1024 + kEpiBytes + 4 * 8192 + 64;
    unsigned long long* d_bg;
    CHECK(cudaMalloc(&d_bg, 4 * sizeof(unsigned long long)));
    for (const Bg& b : bgs)
      for (unsigned part = 0; part < 4; ++part) {
        if (part == kPartIdle && std::string(b.name) == "none") continue;
        const Kern kern = b.parts[part];
        CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        std::vector<double> chunk, op;
        for (int rep = 0; rep < 6; ++rep) {
          CHECK(cudaMemset(d_bg, 0, 4 * sizeof(unsigned long long)));
          kern<<<1, 384, smem>>>(tmD, d_bg, sink);
          CHECK(cudaGetLastError());
          CHECK(cudaDeviceSynchronize());
          unsigned long long h[4];
          CHECK(cudaMemcpy(h, d_bg, sizeof(h), cudaMemcpyDeviceToHost));
          if (rep == 0) continue;
          chunk.push_back(static_cast<double>(h[0]) / kChunks);
          op.push_back(static_cast<double>(h[1]) / kBgProbe);
        }
        if (part != kPartIdle)
          std::printf("epilogue_bg_%s_%s_cycles_per_chunk_x100,1,%.0f\n", b.name, part_names[part], 100 * median(chunk));
        if (std::string(b.name) != "none")
          std::printf("epilogue_bg_%s_%s_op_cycles_x100,1,%.0f\n", b.name, part_names[part], 100 * median(op));
      }
    CHECK(cudaFree(d_bg));
  }
  {  // the tile scheduler's arithmetic
    long long* d_s;
    CHECK(cudaMalloc(&d_s, 3 * sizeof(long long)));
    std::vector<double> udiv, tile;
    for (int rep = 0; rep < 6; ++rep) {
      k_scalar<<<1, 1>>>(7u + rep, 16u, 32u, 1u, d_s);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      long long h[3];
      CHECK(cudaMemcpy(h, d_s, sizeof(h), cudaMemcpyDeviceToHost));
      if (rep == 0) continue;
      udiv.push_back(static_cast<double>(h[0]) / 1024);
      tile.push_back(static_cast<double>(h[1]) / 1024);
    }
    std::printf("scalar_udiv_dependent_latency_x100,1,%.0f\n", 100 * median(udiv));
    std::printf("scalar_tile_of_dependent_latency_x100,1,%.0f\n", 100 * median(tile));
    CHECK(cudaFree(d_s));
  }
  Prologue* d_pro;
  CHECK(cudaMalloc(&d_pro, sizeof(Prologue)));
  long long* d_stamps;
  CHECK(cudaMalloc(&d_stamps, 2 * sizeof(long long)));
  for (const unsigned param : {1u, 2u}) {  // 2: after the twin's two start stamps (st.global)
    std::vector<std::vector<double>> steps(7);
    for (int rep = 0; rep < 9; ++rep) {
      k_pro<<<1, 384>>>(d_pro, 7u + rep, sink, param == 2 ? d_stamps : nullptr);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      Prologue h;
      CHECK(cudaMemcpy(&h, d_pro, sizeof(Prologue), cudaMemcpyDeviceToHost));
      if (rep == 0) continue;  // warm-up
      const long long v[7] = {h.init, h.fence_mbar_init, h.fence_proxy_async, h.syncthreads, h.consumer_synced,
                              h.setmaxnreg_inc, h.first_param};
      for (int i = 0; i < 7; ++i) steps[i].push_back(static_cast<double>(v[i]));
    }
    // Each the cycles from thread 0's first clock64 to the step's end.
    const char* names[7] = {"init12", "fence_mbarrier_init", "fence_proxy_async", "syncthreads",
                            "consumer_syncthreads", "consumer_setmaxnreg_inc", "consumer_first_param"};
    for (int i = 0; i < 7; ++i) std::printf("prologue_%s_done_cycles,%u,%.0f\n", names[i], param, median(steps[i]));
  }
  CHECK(cudaFree(d_stamps));
  CHECK(cudaFree(d_pro));
  CHECK(cudaFree(d));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(sink));
  return 0;
}
