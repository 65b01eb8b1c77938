// Microbenchmarks of the units Hopper shares with Blackwell (mbarrier, clusters, DSMEM, TMA),
// timed with clock64 over dependent chains on one H100. Prints CSV: scenario,param,cycles.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_ubench.cu -lcuda
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "calibration_ptx.cuh"

namespace cg = cooperative_groups;

constexpr int kIters = 1000;

__device__ __forceinline__ void mbar_arrive_remote(unsigned cluster_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}
__device__ __forceinline__ unsigned mapa(unsigned addr, unsigned rank) {
  unsigned out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
}
// Not .aligned: threads of a warp may reach it from divergent code.
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive; barrier.cluster.wait;" ::: "memory");
}

// 1. arrive + try_wait.parity by one thread on a count-1 barrier.
__global__ void k_mbar_same_thread(long long* out) {
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  const unsigned b = smem_addr(&bar);
  mbar_init(b, 1);
  long long t0 = 0;
  for (int i = 0; i < kIters + 8; ++i) {
    if (i == 8) t0 = clock64();
    mbar_arrive(b);
    mbar_wait(b, i & 1);
  }
  out[0] = (clock64() - t0) / kIters;
}

// 2. warp 0 -> warp 1 -> warp 0 ping-pong through two barriers: one-way = round trip / 2.
__global__ void k_mbar_cross_warp(long long* out) {
  __shared__ alignas(8) unsigned long long bars[2];
  const unsigned a = smem_addr(&bars[0]), b = smem_addr(&bars[1]);
  if (threadIdx.x == 0) {
    mbar_init(a, 1);
    mbar_init(b, 1);
  }
  __syncthreads();
  long long t0 = 0;
  for (int i = 0; i < kIters + 8; ++i) {
    if (threadIdx.x == 0) {
      if (i == 8) t0 = clock64();
      mbar_arrive(a);
      mbar_wait(b, i & 1);
    } else if (threadIdx.x == 32) {
      mbar_wait(a, i & 1);
      mbar_arrive(b);
    }
  }
  if (threadIdx.x == 0) out[0] = (clock64() - t0) / kIters / 2;
}

// 3. rank 0 <-> last rank ping-pong with remote arrives: one-way = round trip / 2.
__global__ void k_remote_arrive(long long* out) {
  __shared__ alignas(8) unsigned long long bar;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), last = cluster.num_blocks() - 1;
  const unsigned b = smem_addr(&bar);
  if (threadIdx.x == 0) {
    mbar_init(b, 1);
    fence_mbar_init();
  }
  cluster_sync_all();
  long long t0 = 0;
  if (threadIdx.x == 0 && (rank == 0 || rank == last)) {
    const unsigned other = mapa(b, rank == 0 ? last : 0);
    for (int i = 0; i < kIters + 8; ++i) {
      if (rank == 0) {
        if (i == 8) t0 = clock64();
        mbar_arrive_remote(other);
        mbar_wait(b, i & 1);
      } else {
        mbar_wait(b, i & 1);
        mbar_arrive_remote(other);
      }
    }
    if (rank == 0) out[0] = (clock64() - t0) / kIters / 2;
  }
  cluster_sync_all();
}

// 4. dependent ld.shared::cluster chain through the last rank's SMEM.
__global__ void k_dsmem_chain(long long* out) {
  __shared__ unsigned next[256];
  cg::cluster_group cluster = cg::this_cluster();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) next[i] = (i * 97 + 1) % 256;
  cluster_sync_all();
  if (threadIdx.x == 0 && cluster.block_rank() == 0) {
    const unsigned base = mapa(smem_addr(next), cluster.num_blocks() - 1);
    unsigned idx = 0;
    long long t0 = 0;
    for (int i = 0; i < kIters + 8; ++i) {
      if (i == 8) t0 = clock64();
      asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(idx) : "r"(base + idx * 4) : "memory");
    }
    out[0] = (clock64() - t0) / kIters;
    out[1] = idx;  // keep the chain
  }
  cluster_sync_all();
}

// 5. barrier.cluster arrive + wait, relaxed or release/acquire, 32 threads per CTA.
template <bool kRelaxed>
__global__ void k_cluster_barrier(long long* out) {
  long long t0 = 0;
  for (int i = 0; i < kIters + 8; ++i) {
    if (i == 8) t0 = clock64();
    if (kRelaxed)
      asm volatile("barrier.cluster.arrive.relaxed.aligned; barrier.cluster.wait.aligned;" ::: "memory");
    else
      asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
  }
  if (threadIdx.x == 0 && cg::this_cluster().block_rank() == 0) out[0] = (clock64() - t0) / kIters;
}

// 6/7. TMA 2D load latency of one box (L2-resident after the warm-up), optionally multicast to
// every CTA of the cluster (the issuer's barrier observed).
__global__ void k_tma_latency(const __grid_constant__ CUtensorMap map, unsigned box_bytes, int multicast,
                              unsigned row_step, long long* out) {
  extern __shared__ unsigned char smem[];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned dst = (smem_addr(smem) + 1023) & ~1023u;  // the 128B swizzle needs 1024-byte alignment
  const unsigned b = dst + box_bytes;
  const unsigned n = cluster.num_blocks();
  if (threadIdx.x == 0) {
    mbar_init(b, 1);
    fence_mbar_init();
  }
  cluster_sync_all();
  const int iters = 40;
  long long total = 0;
  for (int i = 0; i < iters + 8; ++i) {
    if (threadIdx.x == 0) {
      const long long t0 = clock64();
      mbar_arrive_expect_tx(b, box_bytes);
      const int row = static_cast<int>(i * row_step);  // row_step > 0: every load from rows never read (HBM)
      if (cluster.block_rank() == 0) {
        if (multicast) {
          const unsigned short mask = static_cast<unsigned short>((1u << n) - 1);
          asm volatile(
              "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
              " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
              "l"(&map), "r"(0), "r"(row), "r"(b), "h"(mask)
              : "memory");
        } else {
          asm volatile(
              "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                  dst),
              "l"(&map), "r"(0), "r"(row), "r"(b)
              : "memory");
        }
      }
      mbar_wait(b, i & 1);
      if (i >= 8) total += clock64() - t0;
    }
    if (n > 1) cluster_sync_all();  // receivers ready for the next multicast (a 1-CTA run needs none)
  }
  if (threadIdx.x == 0 && cluster.block_rank() == 0) out[0] = total / iters;
}

// 8. TMA streaming into one SM: 4 stages of one box each, 256 loads, bytes per cycle.
__global__ void k_tma_stream(const __grid_constant__ CUtensorMap map, unsigned box_bytes, unsigned rows_total,
                             unsigned box_rows, long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u;
  auto bar = [&](int s) { return base + 4 * box_bytes + 8 * s; };
  for (int s = 0; s < 4; ++s) mbar_init(bar(s), 1);
  const int loads = 256;
  long long t0 = 0;
  for (int i = 0; i < loads + 4; ++i) {
    const int s = i % 4;
    if (i >= 4) mbar_wait(bar(s), ((i - 4) / 4) & 1);
    if (i == 4) t0 = clock64();
    if (i < loads) {
      mbar_arrive_expect_tx(bar(s), box_bytes);
      const int row = static_cast<int>((i * box_rows) % rows_total);
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
              base + s * box_bytes),
          "l"(&map), "r"(0), "r"(row), "r"(bar(s))
          : "memory");
    }
  }
  out[0] = static_cast<long long>(static_cast<double>(loads - 4) * box_bytes * 100 / (clock64() - t0));  // B/clk x100
}

// 9. TMA streaming into every SM: CTA c streams `loads` boxes from its own region of
// `region_rows` rows (wrapping, so a small region stays L2-resident) through `stages` stages.
// globaltimer brackets the grid's transfer; CTA 0 also reports its clock64 cycles, so the
// aggregate can be given in bytes per SM clock.
__global__ void k_tma_stream_grid(const __grid_constant__ CUtensorMap map, unsigned box_bytes, unsigned box_rows,
                                  unsigned region_rows, unsigned stages, unsigned loads, long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u;
  auto bar = [&](unsigned s) { return base + stages * box_bytes + 8 * s; };
  for (unsigned s = 0; s < stages; ++s) mbar_init(bar(s), 1);
  long long ns0, ns1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
  const long long c0 = clock64();
  const unsigned first_row = blockIdx.x * region_rows;
  for (unsigned i = 0; i < loads + stages; ++i) {
    const unsigned s = i % stages;
    if (i >= stages) mbar_wait(bar(s), ((i - stages) / stages) & 1);
    if (i < loads) {
      mbar_arrive_expect_tx(bar(s), box_bytes);
      const int row = static_cast<int>(first_row + (i * box_rows) % region_rows);
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
              base + s * box_bytes),
          "l"(&map), "r"(0), "r"(row), "r"(bar(s))
          : "memory");
    }
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
  atomicMin(reinterpret_cast<unsigned long long*>(&out[0]), static_cast<unsigned long long>(ns0));
  atomicMax(reinterpret_cast<unsigned long long*>(&out[1]), static_cast<unsigned long long>(ns1));
  if (blockIdx.x == 0) {
    out[2] = clock64() - c0;
    out[3] = ns1 - ns0;
  }
}

// Aggregate bytes per SM clock x100 of k_tma_stream_grid on every SM.
long long stream_grid(const CUtensorMap& map, unsigned ctas, unsigned box_bytes, unsigned box_rows,
                      unsigned region_rows, unsigned stages, unsigned loads) {
  long long* out;
  CHECK(cudaMallocManaged(&out, 4 * sizeof(long long)));
  out[0] = 0x7fffffffffffffffll;
  out[1] = 0;
  const unsigned smem = stages * box_bytes + 2048;
  CHECK(cudaFuncSetAttribute(k_tma_stream_grid, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k_tma_stream_grid<<<ctas, 32, smem>>>(map, box_bytes, box_rows, region_rows, stages, loads, out);
  CHECK(cudaDeviceSynchronize());
  const double ghz = static_cast<double>(out[2]) / static_cast<double>(out[3]);  // CTA 0's clock64 per ns
  const double bytes = static_cast<double>(ctas) * loads * box_bytes;
  const long long v = static_cast<long long>(bytes / (static_cast<double>(out[1] - out[0]) * ghz) * 100);
  CHECK(cudaFree(out));
  return v;
}

template <class Kernel, class... Args>
long long launch(Kernel k, unsigned cluster, unsigned threads, unsigned smem, Args... args) {
  long long* out;
  CHECK(cudaMallocManaged(&out, 2 * sizeof(long long)));
  if (smem > 48 * 1024) CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  if (cluster > 8) CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(cluster ? cluster : 1);  // cluster 0: a plain launch, no cluster attribute
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = cluster ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&cfg, k, args..., out));
  CHECK(cudaDeviceSynchronize());
  const long long v = out[0];
  CHECK(cudaFree(out));
  return v;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device,%s,sms,%d,l2_bytes,%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
  std::printf("scenario,param,cycles\n");
  std::printf("mbarrier_same_thread,1,%lld\n", launch(k_mbar_same_thread, 1, 32, 0));
  std::printf("mbarrier_cross_warp_one_way,1,%lld\n", launch(k_mbar_cross_warp, 1, 64, 0));
  for (unsigned c : {2u, 4u, 8u, 16u}) {
    std::printf("remote_arrive_one_way,%u,%lld\n", c, launch(k_remote_arrive, c, 32, 0));
    std::printf("dsmem_load_chain,%u,%lld\n", c, launch(k_dsmem_chain, c, 32, 0));
    std::printf("cluster_barrier_relaxed,%u,%lld\n", c, launch(k_cluster_barrier<true>, c, 32, 0));
    std::printf("cluster_barrier_release,%u,%lld\n", c, launch(k_cluster_barrier<false>, c, 32, 0));
  }
  void* buf;
  const unsigned rows_total = 64 * 1024;  // 8 MiB: L2-resident
  CHECK(cudaMalloc(&buf, 128ull * rows_total));
  CHECK(cudaMemset(buf, 1, 128ull * rows_total));
  for (unsigned kib : {2u, 4u, 8u, 16u, 32u}) {
    const unsigned box_rows = kib * 1024 / 128;
    const CUtensorMap m = make_map(buf, rows_total, box_rows);
    std::printf("tma_2d_latency_l2,%u,%lld\n", kib * 1024, launch(k_tma_latency, 1, 32, kib * 1024 + 2048, m, kib * 1024, 0, 0u));
    std::printf("tma_2d_latency_l2_plain_launch,%u,%lld\n", kib * 1024,
                launch(k_tma_latency, 0, 32, kib * 1024 + 2048, m, kib * 1024, 0, 0u));
  }
  {
    const CUtensorMap m = make_map(buf, rows_total, 128);  // 16 KiB
    for (unsigned c : {1u, 2u, 4u})
      std::printf("tma_2d_multicast_latency_16k,%u,%lld\n", c, launch(k_tma_latency, c, 32, 16 * 1024 + 2048, m, 16 * 1024, 1, 0u));
  }
  {
    const CUtensorMap m = make_map(buf, rows_total, 256);  // 32 KiB boxes
    const long long bpc100 = launch(k_tma_stream, 1, 32, 4 * 32 * 1024 + 2048, m, 32u * 1024, rows_total, 256u);
    std::printf("tma_stream_one_sm_bytes_per_cycle_x100,32768,%lld\n", bpc100);
  }
  CHECK(cudaFree(buf));

  // HBM: a 2 GiB buffer; writing it evicts the L2, and every load below reads rows never read since.
  const unsigned big_rows = 16u * 1024 * 1024;
  void* big;
  CHECK(cudaMalloc(&big, 128ull * big_rows));
  CHECK(cudaMemset(big, 1, 128ull * big_rows));
  for (unsigned kib : {2u, 4u, 8u, 16u, 32u}) {
    const unsigned box_rows = kib * 1024 / 128;
    const CUtensorMap m = make_map(big, big_rows, box_rows);
    std::printf("tma_2d_latency_hbm,%u,%lld\n", kib * 1024,
                launch(k_tma_latency, 1, 32, kib * 1024 + 2048, m, kib * 1024, 0, 64u * box_rows));
  }
  {
    const CUtensorMap m = make_map(big, big_rows, 256);  // 32 KiB boxes
    const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
    // L2-resident: 256 KiB per CTA (33 MiB in all), streamed 64 times over after one warm-up pass.
    stream_grid(m, sms, 32768, 256, 2048, 4, 8);
    for (unsigned stages : {2u, 4u, 6u})
      std::printf("tma_stream_all_sms_l2_bytes_per_cycle_x100,%u,%lld\n", stages * 32768,
                  stream_grid(m, sms, 32768, 256, 2048, stages, 512));
    // HBM: each CTA reads its own slice of the 2 GiB once (15.5 MiB), far more than the L2 holds.
    const unsigned region = big_rows / sms / 256 * 256;
    for (unsigned stages : {2u, 4u, 6u})
      std::printf("tma_stream_all_sms_hbm_bytes_per_cycle_x100,%u,%lld\n", stages * 32768,
                  stream_grid(m, sms, 32768, 256, region, stages, region / 256));
    std::printf("tma_stream_one_sm_hbm_bytes_per_cycle_x100,%u,%lld\n", 4 * 32768,
                stream_grid(m, 1, 32768, 256, big_rows, 4, 2048));
  }
  CHECK(cudaFree(big));
  return 0;
}
