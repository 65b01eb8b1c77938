// CTA dispatch: how far apart the block scheduler starts the CTAs of one launch. A kernel of
// 384-thread CTAs with 200 KiB of dynamic SMEM (one CTA per SM, as the GEMM twin) where thread 0
// of each CTA reads %globaltimer and clock64 at entry, spins 20000 cycles (so the wave is
// resident together) and reads them again. Prints CSV rows scenario,param,cycles:
//   cta_dispatch_spread,G   max - min entry time over the G CTAs of the first wave (G <= SMs),
//                           in SM cycles at the clock the spin measures; median of 11 launches.
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
  for (int grid : {8, 32, 64, 128, prop.multiProcessorCount}) {
    std::vector<long long> spreads;
    for (int rep = 0; rep < 12; ++rep) {
      k_entry<<<grid, 384, smem>>>(out);
      CHECK(cudaDeviceSynchronize());
      if (rep == 0) continue;  // warm-up
      CHECK(cudaMemcpy(h.data(), out, 4 * sizeof(unsigned long long) * grid, cudaMemcpyDeviceToHost));
      unsigned long long first = ~0ull, last = 0;
      double mhz = 0;
      for (int c = 0; c < grid; ++c) {
        first = std::min(first, h[4 * c]);
        last = std::max(last, h[4 * c]);
        mhz += static_cast<double>(h[4 * c + 3] - h[4 * c + 1]) * 1000.0 / static_cast<double>(h[4 * c + 2] - h[4 * c]);
      }
      mhz /= grid;
      spreads.push_back(static_cast<long long>(static_cast<double>(last - first) * mhz / 1000.0 + 0.5));
    }
    std::sort(spreads.begin(), spreads.end());
    std::printf("cta_dispatch_spread,%d,%lld\n", grid, spreads[spreads.size() / 2]);
  }
  return 0;
}
