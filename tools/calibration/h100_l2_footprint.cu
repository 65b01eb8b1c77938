// h100_l2_footprint: how much data the L2 holds for reads from all SMs, by footprint, when every
// SM reads the whole footprint ("shared") and when each SM reads its own slice of it ("split").
// An L2 of two partitions that each keep a copy of what their own SMs read (as the A100/H100
// whitepapers describe their L2 partitions) holds a shared footprint only up to one partition's
// capacity (every line twice), a split one up to more than that (a line twice only when its reader
// is in the other partition than the line's home); one unified 50 MiB L2 would hold both up to 50.
// Run under Nsight Compute (run_l2_footprint.sh), which counts the DRAM bytes of the measured
// launch; this program prints the row's timing.
//
// CLI: h100_l2_footprint shared|split FOOTPRINT_MIB
// The program: a region of FOOTPRINT_MIB MiB of 128-byte rows (uint8 map, box 128 rows = 16 KiB,
// SWIZZLE_128B, L2 promotion 128B); one CTA of 32 threads per SM (132; 133120 B of dynamic SMEM
// each, so one per SM), thread 0 loads boxes through 4 stages (calibration_ptx.cuh's
// tma_stream_loop). "shared": CTA c reads all n = FOOTPRINT_MIB * 64 boxes in order, starting at box
// c * n / 132 (staggered, so CTAs do not join each other's fills in flight); "split": CTA c reads
// its n / 132 boxes. Launch 1 (warm-up) makes one pass over what each CTA reads, launch 2 (the
// measured one: ncu --launch-skip 1) two passes: DRAM bytes of launch 2 / (2 x footprint) is the
// share of the footprint fetched from HBM again per pass (0: held; 1 or more: not).
// Prints CSV: mode,footprint_mib,boxes_per_cta,cycles,clock_mhz,l2_bytes_per_cycle (launch 2: the
// slowest CTA's clock64 span, clock64 / %globaltimer, bytes all CTAs loaded / cycles).
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_l2_footprint.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <string>
#include <vector>

constexpr unsigned kBox = 16384, kStages = 4, kSmem = 133120, kCtas = 132;

// out per CTA: start ns, end ns, start clock, end clock.
__global__ void k_sweep(const __grid_constant__ CUtensorMap map, unsigned n, unsigned count,
                        unsigned stagger, unsigned passes, long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bars = base + kStages * kBox;
  for (unsigned s = 0; s < kStages; ++s) mbar_init(bars + 8 * s, 1);
  fence_mbar_init();
  const unsigned start = blockIdx.x * stagger;
  const unsigned long long ns0 = globaltimer();
  const long long c0 = clock64();
  // shared (count = n): box (start + i) % n; split: boxes start .. start + count - 1, cyclically.
  if (count == n)
    tma_stream_loop(&map, base, bars, kBox, 128, 0, 128 * n, kStages, count * passes, start);
  else
    tma_stream_loop(&map, base, bars, kBox, 128, 128 * start, 128 * count, kStages, count * passes);
  long long* o = out + 4 * blockIdx.x;
  o[0] = static_cast<long long>(ns0);
  o[1] = static_cast<long long>(globaltimer());
  o[2] = c0;
  o[3] = clock64();
}

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "shared" && std::string(argv[1]) != "split")) {
    std::fprintf(stderr, "usage: h100_l2_footprint shared|split FOOTPRINT_MIB\n");
    return 1;
  }
  const bool shared = std::string(argv[1]) == "shared";
  const unsigned mib = static_cast<unsigned>(std::stoul(argv[2]));
  const unsigned n = mib * 64;  // 16 KiB boxes
  void* region = nullptr;
  long long* dout = nullptr;
  CHECK(cudaMalloc(&region, static_cast<size_t>(n) * kBox));
  CHECK(cudaMemset(region, 7, static_cast<size_t>(n) * kBox));
  CHECK(cudaMalloc(&dout, sizeof(long long) * 4 * kCtas));
  CHECK(cudaFuncSetAttribute(k_sweep, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const CUtensorMap map = make_map(region, n * 128, 128);
  // shared: every CTA all n boxes from its staggered start; split: CTA c boxes [c n/132, (c+1) n/132).
  const unsigned count = shared ? n : n / kCtas, stagger = n / kCtas;
  std::vector<long long> h(4 * kCtas);
  for (unsigned passes : {1u, 2u}) {
    k_sweep<<<kCtas, 32, kSmem>>>(map, n, count, stagger, passes, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaMemcpy(h.data(), dout, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  long long cycles = 0;
  double mhz = 0;
  for (unsigned c = 0; c < kCtas; ++c) {
    const long long* o = &h[4 * c];
    cycles = std::max(cycles, o[3] - o[2]);
    mhz += static_cast<double>(o[3] - o[2]) / (static_cast<double>(o[1] - o[0]) / 1000.0) / kCtas;
  }
  const double bytes = 2.0 * kCtas * count * kBox;
  std::printf("%s,%u,%u,%lld,%.0f,%.1f\n", argv[1], mib, count, cycles, mhz, bytes / static_cast<double>(cycles));
  CHECK(cudaFree(region));
  CHECK(cudaFree(dout));
  return 0;
}
