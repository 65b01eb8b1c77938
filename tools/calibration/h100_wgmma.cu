// Microbenchmarks of Hopper's warpgroup MMA (wgmma.mma_async), the silicon side of the
// gemm_sm90 validation. One CTA on one SM; timed with clock64 by thread 0 of the first
// warpgroup; the first 8 loop iterations are discarded, the next kIters = 1000 are timed.
// Prints CSV: scenario,param,cycles where param = N (the instruction's n: 64, 128 or 256).
//
// Operands: SMEM, 1024-byte aligned, zero-filled, in the canonical K-major 128B-swizzle layout
// (what TMA writes with CU_TENSOR_MAP_SWIZZLE_128B for a 64-bf16 / 128-byte-wide box): A tile
// of 64 rows x 128 B per warpgroup (WG w's A at base + w*8192), one shared B tile of N rows x
// 128 B at base + 16384. Descriptors as in gemm_sm90_twin.cu: start address >> 4 (bits 0-13),
// LBO 16 B >> 4 = 1 (bits 16-29, unused for swizzled K-major), SBO 1024 B >> 4 = 64 (bits
// 32-45, 8 rows x 128 B), base offset 0 (bits 49-51), layout type 1 = SWIZZLE_128B (bits
// 62-63). The k-th wgmma of a loop body uses the k%4-th 32-byte K slice (start + 32*(k%4)),
// as the GEMM mainloop's kk does. Accumulator f32, scale-d = 1, imm-scale-a/b = 1, no
// transpose. RS variants: A from 4 .b32 registers per thread (zeros), B from SMEM.
//
// Rows:
// - wgmma_latency_ss_bf16 / _rs_bf16 / _ss_e4m3 (128 threads): loop { wgmma.fence; one
//   m64nNk16.f32.bf16.bf16 (e4m3: m64nNk32.f32.e4m3.e4m3); wgmma.commit_group;
//   wgmma.wait_group 0 } -> cycles per iteration (issue + completion of one wgmma, plus the
//   fence/commit/wait and loop overhead, a few cycles).
// - wgmma_throughput_{ss_bf16,rs_bf16,ss_e4m3}_1wg_x100 (128 threads): loop { wgmma.fence;
//   32 wgmmas back to back into the same accumulator; commit; wait_group 0 } -> 100 x cycles
//   per wgmma (integer).
// - wgmma_throughput_..._2wg_x100 (256 threads): both warpgroups run that loop at once, each
//   with its own accumulator and its own A tile (B shared, as in the cooperative GEMM); a
//   __syncthreads (bar.sync 0) after the warm-up iterations starts them together -> 100 x
//   (WG0 thread 0's cycles over the timed region) / (wgmmas of both warpgroups in it).
// Choice: every variant ends the timed region with a __syncthreads before the closing
// clock64, so the 2-WG region covers both warpgroups' last wait_group (1-WG: +~20 cycles in
// 32000 wgmmas, negligible). Latency rows are rounded to the nearest cycle.
//
// The asm operand lists (N/2 = 32, 64 or 128 f32 accumulators per thread) are generated with
// the ACC_OPS_* macros and the "%0, ..., %127" strings with WG_D10 (calibration_ptx.cuh); cuobjdump -sass must show
// HGMMA (bf16) / QGMMA (e4m3) and no STL/LDL (run_gemm_sm90.sh checks it).
// Descriptor encoding checked against the PTX ISA, "Asynchronous Warpgroup Level Matrix Shared
// Memory Layout: Matrix Descriptor Format" (section 9.7.15.5.1.2.2, PTX ISA 9.x, read through
// the ptx.poole.ai mirror of docs.nvidia.com/cuda/parallel-thread-execution).
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_wgmma.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "calibration_ptx.cuh"

constexpr int kWarm = 8;
constexpr int kIters = 1000;
constexpr int kBurst = 32;                          // wgmmas per iteration of the throughput loop
constexpr unsigned kATile = 64 * 128;               // one warpgroup's A tile (64 rows x 128 B)
constexpr unsigned kBOffset = 2 * kATile;           // B after the two A tiles
constexpr unsigned kOperandBytes = kBOffset + 256 * 128;
constexpr unsigned kSmemBytes = kOperandBytes + 1024;  // + alignment slack

// ---- wgmma wrappers (WG_ACC*, ACC_OPS_*, WG_SS_BF16, WG_SS_E4M3, WG_RS_BF16, wgmma_fence / commit / wait, fence_regs,
// gmma_desc: calibration_ptx.cuh) -------------------------------------------------------------

template <int N>
struct Wgmma;

template <>
struct Wgmma<64> {
  __device__ __forceinline__ static void ss_bf16(float (&d)[32], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_BF16(64, WG_ACC32, 32, 33, 34) : ACC_OPS_32(d) : "l"(da), "l"(db), "r"(s));
  }
  __device__ __forceinline__ static void rs_bf16(float (&d)[32], const uint32_t (&a)[4], uint64_t db, uint32_t s) {
    asm volatile(WG_RS_BF16(64, WG_ACC32, 32, 33, 34, 35, 36, 37)
                 : ACC_OPS_32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(s));
  }
  __device__ __forceinline__ static void ss_e4m3(float (&d)[32], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_E4M3(64, WG_ACC32, 32, 33, 34) : ACC_OPS_32(d) : "l"(da), "l"(db), "r"(s));
  }
};
template <>
struct Wgmma<128> {
  __device__ __forceinline__ static void ss_bf16(float (&d)[64], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_BF16(128, WG_ACC64, 64, 65, 66) : ACC_OPS_64(d) : "l"(da), "l"(db), "r"(s));
  }
  __device__ __forceinline__ static void rs_bf16(float (&d)[64], const uint32_t (&a)[4], uint64_t db, uint32_t s) {
    asm volatile(WG_RS_BF16(128, WG_ACC64, 64, 65, 66, 67, 68, 69)
                 : ACC_OPS_64(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(s));
  }
  __device__ __forceinline__ static void ss_e4m3(float (&d)[64], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_E4M3(128, WG_ACC64, 64, 65, 66) : ACC_OPS_64(d) : "l"(da), "l"(db), "r"(s));
  }
};
template <>
struct Wgmma<256> {
  __device__ __forceinline__ static void ss_bf16(float (&d)[128], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_BF16(256, WG_ACC128, 128, 129, 130) : ACC_OPS_128(d) : "l"(da), "l"(db), "r"(s));
  }
  __device__ __forceinline__ static void rs_bf16(float (&d)[128], const uint32_t (&a)[4], uint64_t db, uint32_t s) {
    asm volatile(WG_RS_BF16(256, WG_ACC128, 128, 129, 130, 131, 132, 133)
                 : ACC_OPS_128(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(s));
  }
  __device__ __forceinline__ static void ss_e4m3(float (&d)[128], uint64_t da, uint64_t db, uint32_t s) {
    asm volatile(WG_SS_E4M3(256, WG_ACC128, 128, 129, 130) : ACC_OPS_128(d) : "l"(da), "l"(db), "r"(s));
  }
};

enum Op { kSsBf16 = 0, kRsBf16 = 1, kSsE4m3 = 2 };

template <int kOp, int N>
__device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, const uint32_t (&a)[4], uint64_t db) {
  if constexpr (kOp == kSsBf16)
    Wgmma<N>::ss_bf16(d, da, db, 1u);
  else if constexpr (kOp == kRsBf16)
    Wgmma<N>::rs_bf16(d, a, db, 1u);
  else
    Wgmma<N>::ss_e4m3(d, da, db, 1u);
}

// kBody wgmmas per iteration: 1 (latency) or kBurst (throughput). blockDim 128 or 256.
template <int kOp, int N, int kBody>
__global__ void __launch_bounds__(256, 1) k_wgmma(long long* out, int sink) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
  for (unsigned i = threadIdx.x; i < kOperandBytes / 16; i += blockDim.x)
    asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(base + 16 * i), "r"(0u) : "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic writes -> wgmma (async proxy) reads
  __syncthreads();
  const unsigned wg = threadIdx.x / 128;
  const uint64_t da = gmma_desc(base + wg * kATile), db = gmma_desc(base + kBOffset);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  // A fragment for RS: 0 at run time, opaque to the compiler. Four distinct virtual registers:
  // with one value in all four, ptxas copies it into a fresh register quad for every wgmma in
  // flight (190-222 registers, and N=256 got serialized).
  const uint32_t z = static_cast<uint32_t>(sink);
  const uint32_t a[4] = {z, z * 3u, z * 5u, z * 7u};
  long long t0 = 0;
  for (int it = 0; it < kWarm + kIters; ++it) {
    if (it == kWarm) {
      __syncthreads();
      t0 = clock64();
    }
    fence_regs(d);
    wgmma_fence();
#pragma unroll
    for (int i = 0; i < kBody; ++i) mma<kOp, N>(d, da + 2 * (i % 4), a, db + 2 * (i % 4));  // +32 B per K slice
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(d);
  }
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) out[0] = t1 - t0;
  if (sink) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[i];
    out[1 + threadIdx.x] = static_cast<long long>(s);
  }
}

long long* g_out = nullptr;

template <int kOp, int N, int kBody>
long long run(unsigned threads) {
  auto k = k_wgmma<kOp, N, kBody>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  CHECK(cudaMemset(g_out, 0, 8 * sizeof(long long)));
  k<<<1, threads, kSmemBytes>>>(g_out, 0);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  long long cycles = 0;
  CHECK(cudaMemcpy(&cycles, g_out, sizeof(long long), cudaMemcpyDeviceToHost));
  if (kBody == 1) return (cycles + kIters / 2) / kIters;
  const long long wgmmas = static_cast<long long>(threads / 128) * kIters * kBurst;
  return (100 * cycles + wgmmas / 2) / wgmmas;
}

template <int N>
void rows_for_n() {
  std::printf("wgmma_latency_ss_bf16,%d,%lld\n", N, run<kSsBf16, N, 1>(128));
  std::printf("wgmma_latency_rs_bf16,%d,%lld\n", N, run<kRsBf16, N, 1>(128));
  std::printf("wgmma_latency_ss_e4m3,%d,%lld\n", N, run<kSsE4m3, N, 1>(128));
  std::printf("wgmma_throughput_ss_bf16_1wg_x100,%d,%lld\n", N, run<kSsBf16, N, kBurst>(128));
  std::printf("wgmma_throughput_rs_bf16_1wg_x100,%d,%lld\n", N, run<kRsBf16, N, kBurst>(128));
  std::printf("wgmma_throughput_ss_e4m3_1wg_x100,%d,%lld\n", N, run<kSsE4m3, N, kBurst>(128));
  std::printf("wgmma_throughput_ss_bf16_2wg_x100,%d,%lld\n", N, run<kSsBf16, N, kBurst>(256));
  std::printf("wgmma_throughput_rs_bf16_2wg_x100,%d,%lld\n", N, run<kRsBf16, N, kBurst>(256));
  std::printf("wgmma_throughput_ss_e4m3_2wg_x100,%d,%lld\n", N, run<kSsE4m3, N, kBurst>(256));
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device,%s,sms,%d\n", prop.name, prop.multiProcessorCount);
  CHECK(cudaMalloc(&g_out, 512 * sizeof(long long)));
  std::printf("scenario,param,cycles\n");
  rows_for_n<64>();
  rows_for_n<128>();
  rows_for_n<256>();
  CHECK(cudaFree(g_out));
  return 0;
}
