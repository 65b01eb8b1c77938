// h100_cta_sms: which SM each CTA of a one-CTA-per-SM grid runs on, the grid of
// h100_l2_partitions.cu's sweep launches (blockIdx.x = 0..SMs-1, 32 threads, 133120 B of dynamic
// SMEM: one CTA per SM). run_l2_partition_map.sh joins this with the map's "smid partition gpc"
// file for the CTA -> partition and CTA -> GPC rows. The grid is launched LAUNCHES times (default 8);
// every launch's placement is compared with the first.
// Output: "cta <c> sm <smid>" lines for the first launch, "launch <l> <smid of CTA 0> ... <smid of
// CTA SMs-1>" per launch, then "# cta_sms,launches,<n>,same_as_first,<k>" (k of the n launches
// placed every CTA as the first).
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_cta_sms.cu -lcuda
#include "calibration_ptx.cuh"

#include <vector>

constexpr unsigned kSmem = 133120;  // as h100_l2_partitions.cu's kSmem

__global__ void k_cta_sm(unsigned* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  out[blockIdx.x] = sm_id();
  smem[0] = 1;
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 8;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  CHECK(cudaFuncSetAttribute(k_cta_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  unsigned* out;
  CHECK(cudaMalloc(&out, sms * sizeof(unsigned)));
  std::vector<unsigned> first(sms), h(sms);
  int same = 0;
  for (int l = 0; l < launches; ++l) {
    k_cta_sm<<<sms, 32, kSmem>>>(out);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), out, sms * sizeof(unsigned), cudaMemcpyDeviceToHost));
    if (l == 0) first = h;
    std::printf("launch %d", l);
    for (unsigned c = 0; c < sms; ++c) std::printf(" %u", h[c]);
    std::printf("\n");
    same += h == first ? 1 : 0;
  }
  for (unsigned c = 0; c < sms; ++c) std::printf("cta %u sm %u\n", c, first[c]);
  std::printf("# cta_sms,launches,%d,same_as_first,%d\n", launches, same);
  CHECK(cudaFree(out));
  return 0;
}
