// calibration_ptx.cuh: the helpers that two or more of the calibration microbenchmarks use
// (h100_ubench.cu, h100_dispatch.cu, h100_wgmma.cu, gemm_sm90_twin.cu, h100_units2.cu, h100_loaded.cu,
// h100_hbm_boxes.cu, h100_power.cu): the CUDA error check, the cuTensorMapEncodeTiled lookup and the
// uint8 tensor map, the GPC probes' cluster launch and union-find, an integer hash for pseudo-random
// data, and inline-PTX
// wrappers for mbarriers, fences, TMA, bulk groups, %globaltimer and wgmma (sm_90a). A helper that
// only one program uses stays in that program. The device helpers are __forceinline__.
// Included as "calibration_ptx.cuh": the programs are built from this directory.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <vector>

// ---- host ------------------------------------------------------------------------------------
// CHECK(x): run the CUDA runtime call x; on an error print file:line, the call and the error
// string to stderr and exit 1.
#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// The file $TRACE names, opened for writing with `header` as its first line, or nullptr where
// TRACE is not set (the per-load logs of h100_shared_drift.cu and h100_box_spread.cu).
inline std::FILE* open_trace(const char* header) {
  const char* path = std::getenv("TRACE");
  std::FILE* trace = path ? std::fopen(path, "w") : nullptr;
  if (trace) std::fprintf(trace, "%s\n", header);
  return trace;
}

// The driver's cuTensorMapEncodeTiled (its CUDA 12.0 signature).
using EncodeFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled, looked up once through the runtime (cudaGetDriverEntryPointByVersion,
// version 12000), so that no program has to call the driver API by name.
inline EncodeFn encode_tiled() {
  static EncodeFn encode = nullptr;
  if (!encode) {
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), 12000,
                                           cudaEnableDefault, &q));
  }
  return encode;
}

// 2D uint8 map of 128-byte rows (dims {128, rows}, box {128, box_rows}, SWIZZLE_128B, L2 promotion
// 128B unless given, OOB fill none): the map of h100_ubench.cu and h100_units2.cu (256B:
// h100_hbm_loaded.cu). (gemm_sm90_twin.cu's bf16 make_map is the five-argument overload.)
inline CUtensorMap make_map(void* base, unsigned rows, unsigned box_rows,
                            CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B) {
  const EncodeFn encode = encode_tiled();
  CUtensorMap m;
  const cuuint64_t dims[2] = {128, rows};  // 128 bytes per row (the 128B swizzle span)
  const cuuint64_t strides[1] = {128};
  const cuuint32_t box[2] = {128, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  if (encode(&m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) !=
      CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed\n");
    std::exit(1);
  }
  return m;
}

// 2D map of `rows` rows `width` bytes apart (dims {width, rows} in elements), box {128 bytes,
// box_rows}, SWIZZLE_128B, OOB fill none: a K-major operand of row stride `width` read 128 bytes (64
// bf16) of K at a time (h100_hbm_boxes.cu, h100_stage_ring.cu); uint8 elements, or bf16 ones
// (h100_box_stream.cu: the GEMM's element type).
inline CUtensorMap make_strided_map(void* base, unsigned long long width, unsigned long long rows, unsigned box_rows,
                                    CUtensorMapL2promotion promotion, bool bf16 = false) {
  const EncodeFn encode = encode_tiled();
  const unsigned e = bf16 ? 2 : 1;
  CUtensorMap m;
  const cuuint64_t dims[2] = {width / e, rows};
  const cuuint64_t strides[1] = {width};
  const cuuint32_t box[2] = {128 / e, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  if (encode(&m, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box,
             estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (width %llu rows %llu)\n", width, rows);
    std::exit(1);
  }
  return m;
}

// The launch of clusters of `cluster` CTAs, each one warp with `smem` bytes of dynamic SMEM (so one
// CTA per SM), grid one cluster until the caller sets gridDim; `attr` holds the cluster dimension
// and must outlive the config. h100_gpc_map.cu's and h100_l2_partitions.cu's GPC probes.
inline cudaLaunchConfig_t cluster_launch(unsigned cluster, unsigned smem, cudaLaunchAttribute& attr) {
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(32);
  cfg.dynamicSmemBytes = smem;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  cfg.gridDim = dim3(cluster);
  return cfg;
}

// Union-find: the root of x, halving the path (the GPC probes group SMs seen in one cluster).
inline int find_root(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// A 32-bit integer hash (xor-shift-multiply): the pseudo-random operand values of
// gemm_sm90_twin.cu and h100_power.cu.
__host__ __device__ inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// ---- addresses, mbarriers, fences ----------------------------------------------------------------
// Generic -> shared-window address (cvta.to.shared, through __cvta_generic_to_shared).
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// mbarrier.init.shared::cta.b64: barrier at shared address bar, expected arrival count `count`.
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// mbarrier.arrive.shared::cta.b64 (one arrival; the state token goes to a scratch register).
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("{ .reg .b64 s; mbarrier.arrive.shared::cta.b64 s, [%0]; }" ::"r"(bar) : "memory");
}
// mbarrier.arrive.expect_tx.shared::cta.b64: one arrival that also expects `bytes` of transaction.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// mbarrier.try_wait.parity.shared::cta.b64 in a loop until the phase of parity `parity` is done.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
}
// mbarrier.test_wait.parity: whether the phase of `parity` has completed, never suspending the
// thread (try_wait may); h100_box_stream.cu spins on it to compare the two.
__device__ __forceinline__ bool mbar_test_wait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done != 0;
}
// fence.mbarrier_init.release.cluster: makes mbarrier inits visible (to the cluster, the async proxy).
__device__ __forceinline__ void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// fence.proxy.async.shared::cta: generic-proxy SMEM writes -> async-proxy (TMA, wgmma) accesses.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// ld.global.cg.u32: a load cached in the L2 only (latency probes: h100_l2_partitions.cu,
// h100_gemm_loads.cu --probe-homes).
__device__ __forceinline__ unsigned ld_cg(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// mov.u64 from %clock64, ordered with the memory operations around it.
__device__ __forceinline__ long long clock_now() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
// mov.u32 from %smid: the SM this thread runs on.
__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
// mov.u64 from %globaltimer (ns).
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until %globaltimer reaches `start` (ns): the moment every SM of a paced launch sees together.
__device__ __forceinline__ void wait_globaltimer(unsigned long long start) {
  while (globaltimer() < start) {
  }
}
__global__ void k_globaltimer_now(unsigned long long* t) { *t = globaltimer(); }
// The common start of a paced launch (h100_shared_drift.cu, h100_join_window.cu): %globaltimer now,
// read on the device, + 200 us, so every CTA of the launch that follows has started before it.
inline unsigned long long paced_launch_start() {
  static unsigned long long* now = nullptr;
  if (!now) CHECK(cudaMalloc(&now, sizeof(unsigned long long)));
  k_globaltimer_now<<<1, 1>>>(now);
  unsigned long long start;
  CHECK(cudaMemcpy(&start, now, sizeof(start), cudaMemcpyDeviceToHost));
  return start + 200000;
}

// The 1024-aligned base of `stages` SMEM boxes of `box_bytes` in the dynamic SMEM `smem`, with one
// mbarrier (count 1) per stage right after them, initialized and fenced: stage s's box at base +
// s * box_bytes, its barrier at base + stages * box_bytes + 8 s.
__device__ __forceinline__ unsigned init_stage_ring(unsigned char* smem, unsigned stages, unsigned box_bytes) {
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u;
  for (unsigned s = 0; s < stages; ++s) mbar_init(base + stages * box_bytes + 8 * s, 1);
  fence_mbar_init();
  return base;
}
// ---- TMA and bulk groups -----------------------------------------------------------------------
// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes: load the box at
// (x, y) of *map to SMEM dst, completing on mbarrier bar.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap* map, int x, int y, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// `loads` boxes of box_bytes of *map through `stages` stages, stage s at SMEM base + s * box_bytes
// with its mbarrier at bars + 8 * s (initialized with count 1: init_stage_ring). Load i reads the
// box at coords(i) (an int2 {x, y}) into stage i % stages, which is reused once its previous box
// has arrived (try_wait parity ((i - stages) / stages) & 1); returns when the last box has arrived.
template <class Coords>
__device__ __forceinline__ void tma_staged_loop(const CUtensorMap* map, unsigned base, unsigned bars,
                                                unsigned box_bytes, unsigned stages, unsigned loads, Coords coords) {
  for (unsigned i = 0; i < loads + stages; ++i) {
    const unsigned s = i % stages;
    if (i >= stages) mbar_wait(bars + 8 * s, ((i - stages) / stages) & 1);
    if (i < loads) {
      mbar_arrive_expect_tx(bars + 8 * s, box_bytes);
      const int2 xy = coords(i);
      tma_load_2d(base + s * box_bytes, map, xy.x, xy.y, bars + 8 * s);
    }
  }
}
// The all-SM stream program's loop (h100_units2.cu's k_tma_stream_grid, h100_loaded.cu's streaming
// CTAs, h100_l2_footprint.cu): load i reads rows first_row + ((first_box + i) * box_rows) %
// region_rows (box_rows rows per box), at column x (h100_l2_partitions.cu's promo_odd: 128).
__device__ __forceinline__ void tma_stream_loop(const CUtensorMap* map, unsigned base, unsigned bars,
                                                unsigned box_bytes, unsigned box_rows, unsigned first_row,
                                                unsigned region_rows, unsigned stages, unsigned loads,
                                                unsigned first_box = 0, int x = 0) {
  tma_staged_loop(map, base, bars, box_bytes, stages, loads, [&](unsigned i) {
    return make_int2(x, static_cast<int>(first_row + ((first_box + i) * box_rows) % region_rows));
  });
}
// cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: store SMEM src to the box at (x, y) of *map.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, unsigned src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map), "r"(x),
               "r"(y), "r"(src)
               : "memory");
}
// cp.async.bulk.commit_group.
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// cp.async.bulk.wait_group 0: every committed bulk group complete (writes done).
__device__ __forceinline__ void bulk_wait_0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// ---- wgmma (f32 accumulators), asm operand lists generated by macros ----------------------------
// "%<t>0, ..., %<t>9" (t empty: %0..%9).
#define WG_D10(t) \
  "%" #t "0, %" #t "1, %" #t "2, %" #t "3, %" #t "4, %" #t "5, %" #t "6, %" #t "7, %" #t "8, %" #t "9"
// The accumulator vector "{%0, ..., %31}" / "{%0, ..., %63}" / "{%0, ..., %127}" (n = 64, 128, 256).
#define WG_ACC32 "{" WG_D10() ", " WG_D10(1) ", " WG_D10(2) ", %30, %31}"
#define WG_ACC64 \
  "{" WG_D10() ", " WG_D10(1) ", " WG_D10(2) ", " WG_D10(3) ", " WG_D10(4) ", " WG_D10(5) ", %60, %61, %62, %63}"
#define WG_ACC128                                                                                              \
  "{" WG_D10() ", " WG_D10(1) ", " WG_D10(2) ", " WG_D10(3) ", " WG_D10(4) ", " WG_D10(5) ", " WG_D10(6) ", " \
      WG_D10(7) ", " WG_D10(8) ", " WG_D10(9) ", " WG_D10(10) ", " WG_D10(11)                                 \
      ", %120, %121, %122, %123, %124, %125, %126, %127}"
// "+f" read-write operands d[i], ..., d[i + 3] / + 15 / + 31.
#define WG_F4(d, i) "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3])
#define WG_F16(d, i) WG_F4(d, i), WG_F4(d, (i) + 4), WG_F4(d, (i) + 8), WG_F4(d, (i) + 12)
#define WG_F32(d, i) WG_F16(d, i), WG_F16(d, (i) + 16)
// The operand lists matching WG_ACC32 / WG_ACC64 / WG_ACC128 (d: float[32] / [64] / [128]).
#define ACC_OPS_32(d) WG_F32(d, 0)
#define ACC_OPS_64(d) WG_F32(d, 0), WG_F32(d, 32)
#define ACC_OPS_128(d) WG_F32(d, 0), WG_F32(d, 32), WG_F32(d, 64), WG_F32(d, 96)

// wgmma.mma_async.sync.aligned.m64n<NN>k16.f32.bf16.bf16, both operands from SMEM descriptors:
// d = ACC, a-desc %IA, b-desc %IB, scale-d (predicate from operand %IS != 0), imm-scale-a 1,
// imm-scale-b 1, tnspA 0, tnspB 0.
#define WG_SS_BF16(NN, ACC, IA, IB, IS)                                                               \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %" #IS ", 0;\nwgmma.mma_async.sync.aligned.m64n" #NN              \
  "k16.f32.bf16.bf16 " ACC ", %" #IA ", %" #IB ", p, 1, 1, 0, 0;\n}\n"

// RS: d, {a0..a3} (A from registers), b-desc, scale-d, imm-scale-a 1, imm-scale-b 1, tnspB 0.
#define WG_RS_BF16(NN, ACC, I0, I1, I2, I3, IB, IS)                                                  \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %" #IS ", 0;\nwgmma.mma_async.sync.aligned.m64n" #NN              \
  "k16.f32.bf16.bf16 " ACC ", {%" #I0 ", %" #I1 ", %" #I2 ", %" #I3 "}, %" #IB ", p, 1, 1, 0;\n}\n"

// FP8 SS: d, a-desc, b-desc, scale-d, imm-scale-a 1, imm-scale-b 1 (no transpose operands for fp8).
#define WG_SS_E4M3(NN, ACC, IA, IB, IS)                                                               \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %" #IS ", 0;\nwgmma.mma_async.sync.aligned.m64n" #NN              \
  "k32.f32.e4m3.e4m3 " ACC ", %" #IA ", %" #IB ", p, 1, 1;\n}\n"

// wgmma.fence.sync.aligned.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// wgmma.commit_group.sync.aligned.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// wgmma.wait_group.sync.aligned Pending.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}
// An empty asm per accumulator register ("+f", memory clobber): pins the accumulator registers in
// program order against the (volatile) fence / wait asm.
template <int R>
__device__ __forceinline__ void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// SM90 GMMA matrix descriptor (64 bit): K-major, 128B swizzle (layout type 1, bits 62-63), start
// address (addr & 0x3FFFF) >> 4 (bits 0-13), LBO 16 B >> 4 = 1 (bits 16-29, unused for swizzled
// K-major), SBO 1024 B >> 4 = 64 (bits 32-45), base offset 0 (bits 49-51).
__device__ __forceinline__ uint64_t gmma_desc(unsigned smem_byte_addr) {
  return static_cast<uint64_t>((smem_byte_addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

// ---- per-CTA timing of one-CTA-per-SM programs ---------------------------------------------------
// What each CTA of h100_hbm_boxes.cu and h100_stage_ring.cu records of its timed loop: %globaltimer
// (ns) and clock64 at its start and end, and its %smid.
struct CtaTiming {
  long long ns0, ns1, c0, c1, smid;
  double cycles() const { return static_cast<double>(c1 - c0); }
  double mhz() const { return cycles() / (static_cast<double>(ns1 - ns0) / 1000.0); }
};

// The `g` CTAs' records, copied back from the device; exits if two CTAs ran on one SM.
inline std::vector<CtaTiming> read_cta_timings(const CtaTiming* device, unsigned g) {
  std::vector<CtaTiming> h(g);
  CHECK(cudaMemcpy(h.data(), device, g * sizeof(CtaTiming), cudaMemcpyDeviceToHost));
  std::vector<long long> smids;
  for (const CtaTiming& t : h) smids.push_back(t.smid);
  std::sort(smids.begin(), smids.end());
  if (std::adjacent_find(smids.begin(), smids.end()) != smids.end()) {
    std::fprintf(stderr, "two CTAs on one SM\n");
    std::exit(1);
  }
  return h;
}

// The median of `v` (the upper one of an even count; 0 for none).
template <class T>
T median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}
