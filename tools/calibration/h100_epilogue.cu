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
// store_order_<read|write>_w<warps>_k<k>_store<i>_cycles,<warp>,<median over 8 launches>.
//
// Prologue (k_pro, one CTA): thread 0 reads clock64 around the twin's start-up steps: 12
// mbarrier.init (4 stages: full, empty, and 4 turn barriers), fence.mbarrier_init.release.cluster,
// fence.proxy.async.shared::cta, __syncthreads; thread 128 (a consumer) around setmaxnreg.inc 232
// after WG0's setmaxnreg.dec 40 and around its first read of a kernel parameter (the constant
// bank). clock64 is the SM's, so thread 0's and thread 128's readings compare.
// Rows: prologue_<step>_done_cycles,1,<median over 8 launches>: cycles from thread 0's first clock64
// to the step's end.
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
      if (kParts & kSt) {
        const unsigned row = 16 * warp + lane / 4;
#pragma unroll
        for (int jj = 0; jj < 8; ++jj) {
          const int j = 8 * c + jj;
          const unsigned col = 8 * jj + 2 * (lane % 4);
          const unsigned off_lo = row * 128 + (((col / 8) ^ (row % 8)) * 16) + (col % 8) * 2;
          const unsigned off_hi = (row + 8) * 128 + (((col / 8) ^ ((row + 8) % 8)) * 16) + (col % 8) * 2;
          asm volatile("st.shared.b32 [%0], %1;" ::"r"(buf + off_lo), "r"(pack_bf16x2(acc[4 * j], acc[4 * j + 1]))
                       : "memory");
          asm volatile("st.shared.b32 [%0], %1;" ::"r"(buf + off_hi), "r"(pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]))
                       : "memory");
        }
      }
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

__global__ void __launch_bounds__(384, 1) k_pro(Prologue* out, unsigned param, unsigned* sink) {
  __shared__ __align__(8) unsigned long long bars[12];
  __shared__ unsigned long long start;
  if (threadIdx.x == 0) {
    const unsigned long long c0 = clock64();
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
    CHECK(cudaMalloc(&d_order, 8 * sizeof(long long)));
    const unsigned smem = 1024 + 16 * 8192;
    for (const bool write : {false, true}) {
      auto kern = write ? k_store_order<true> : k_store_order<false>;
      CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      for (const unsigned warps : {1u, 2u})
        for (const unsigned k : {1u, 2u, 4u}) {
          std::vector<std::vector<double>> done(warps * k);
          for (int rep = 0; rep < 9; ++rep) {
            kern<<<1, 32 * warps, smem>>>(tmD, k, d_order);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            std::vector<long long> h(warps * k);
            CHECK(cudaMemcpy(h.data(), d_order, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            if (rep == 0) continue;  // warm-up (the boxes L2-resident, the descriptor cached)
            for (unsigned i = 0; i < warps * k; ++i) done[i].push_back(static_cast<double>(h[i]));
          }
          for (unsigned w = 0; w < warps; ++w)
            for (unsigned i = 0; i < k; ++i)
              std::printf("store_order_%s_w%u_k%u_store%u_cycles,%u,%.0f\n", write ? "write" : "read", warps, k, i, w,
                          median(done[w * k + i]));
        }
    }
    CHECK(cudaFree(d_order));
  }
  Prologue* d_pro;
  CHECK(cudaMalloc(&d_pro, sizeof(Prologue)));
  std::vector<std::vector<double>> steps(7);
  for (int rep = 0; rep < 9; ++rep) {
    k_pro<<<1, 384>>>(d_pro, 7u + rep, sink);
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
  for (int i = 0; i < 7; ++i) std::printf("prologue_%s_done_cycles,1,%.0f\n", names[i], median(steps[i]));
  CHECK(cudaFree(d_pro));
  CHECK(cudaFree(d));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(sink));
  return 0;
}
