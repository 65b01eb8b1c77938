// CTA dispatch: how far apart the block scheduler starts the CTAs of one launch. A kernel of
// 384-thread CTAs with 200 KiB of dynamic SMEM (one CTA per SM, as the GEMM twin) where thread 0
// of each CTA reads %globaltimer and clock64 at entry, spins 20000 cycles (so the wave is
// resident together) and reads them again. Prints CSV rows scenario,param,cycles:
//   cta_dispatch_spread,G   max - min entry time over the G CTAs of the first wave (G <= SMs),
//                           in SM cycles at the clock the spin measures; median of the launches.
//   cta_dispatch_spread_mean_x100,G   the same, mean over the launches, x 100. %globaltimer ticks
//                           (cta_dispatch_timer_tick_ns, the smallest step any two entries show)
//                           are about as coarse as the spread, so one launch spans a whole
//                           number of ticks (the median 0 or 1); over launches whose starts fall
//                           at random against the ticks the mean number of ticks spanned is the
//                           spread over the tick, so the mean is the spread itself.
//   cta_dispatch_timer_tick_ns,0
//   cta_dispatch_offset_x100,C   CTA C's entry after the launch's first, in the full wave (G =
//                           SMs), mean over the launches, x 100: the order the scheduler starts
//                           them in, resolved below the tick by the same averaging.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_dispatch.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "calibration_ptx.cuh"

// out[4 * cta + 0..3]: entry ns, entry clock, exit ns, exit clock.
__global__ void __launch_bounds__(384, 1) k_entry(unsigned long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned long long ns0 = globaltimer();
  const long long c0 = clock64();
  while (clock64() - c0 < 20000) {
  }
  smem[0] = 1;
  out[4 * blockIdx.x + 0] = ns0;
  out[4 * blockIdx.x + 1] = static_cast<unsigned long long>(c0);
  out[4 * blockIdx.x + 2] = globaltimer();
  out[4 * blockIdx.x + 3] = static_cast<unsigned long long>(clock64());
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int smem = 200 * 1024;
  CHECK(cudaFuncSetAttribute(k_entry, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  unsigned long long* out;
  CHECK(cudaMalloc(&out, 4 * sizeof(unsigned long long) * prop.multiProcessorCount));
  std::vector<unsigned long long> h(4 * prop.multiProcessorCount);
  unsigned long long tick = ~0ull;
  std::vector<double> offset(prop.multiProcessorCount, 0.0);
  for (int grid : {8, 32, 64, 128, prop.multiProcessorCount}) {
    std::vector<long long> spreads;
    double mean = 0;
    constexpr int kLaunches = 201;
    for (int rep = 0; rep < kLaunches; ++rep) {
      k_entry<<<grid, 384, smem>>>(out);
      CHECK(cudaDeviceSynchronize());
      if (rep == 0) continue;  // warm-up
      CHECK(cudaMemcpy(h.data(), out, 4 * sizeof(unsigned long long) * grid, cudaMemcpyDeviceToHost));
      unsigned long long first = ~0ull, last = 0;
      double mhz = 0;
      for (int c = 0; c < grid; ++c) {
        first = std::min(first, h[4 * c]);
        last = std::max(last, h[4 * c]);
        for (int o = 0; o < c; ++o)
          if (h[4 * c] != h[4 * o]) tick = std::min(tick, h[4 * c] > h[4 * o] ? h[4 * c] - h[4 * o] : h[4 * o] - h[4 * c]);
        mhz += static_cast<double>(h[4 * c + 3] - h[4 * c + 1]) * 1000.0 / static_cast<double>(h[4 * c + 2] - h[4 * c]);
      }
      mhz /= grid;
      spreads.push_back(static_cast<long long>(static_cast<double>(last - first) * mhz / 1000.0 + 0.5));
      mean += static_cast<double>(last - first) * mhz / 1000.0 / (kLaunches - 1);
      if (grid == prop.multiProcessorCount)
        for (int c = 0; c < grid; ++c)
          offset[c] += static_cast<double>(h[4 * c] - first) * mhz / 1000.0 / (kLaunches - 1);
    }
    std::sort(spreads.begin(), spreads.end());
    std::printf("cta_dispatch_spread,%d,%lld\n", grid, spreads[spreads.size() / 2]);
    std::printf("cta_dispatch_spread_mean_x100,%d,%.0f\n", grid, 100 * mean);
  }
  std::printf("cta_dispatch_timer_tick_ns,0,%llu\n", tick);
  for (int c = 0; c < prop.multiProcessorCount; ++c) std::printf("cta_dispatch_offset_x100,%d,%.0f\n", c, 100 * offset[c]);
  return 0;
}
