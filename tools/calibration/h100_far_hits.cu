// What a line held only by the other L2 partition costs, in each direction. h100_l2_partitions'
// map measures it one way (its reference SM is in partition 0, so the SMs of partition 1 pay it:
// 168 / 169 cycles a far line on the H100 / H200; the configs' dies.far_hit_latency, 149 / 146, comes
// from the promoted-box rows of h100_hit_boxes.cu); the persistent GEMM's SMs of partition 1
// often start a tenth behind those of partition 0 (README, "The partitions start apart"), which a
// dearer crossing into partition 1 would explain. Here each direction alike: after the L2 is
// flushed, one SM of partition R (the reference) reads every line of a 4 MiB region once, so that
// R holds a copy of each and the other partition only the lines homed there; then one thread on
// an SM of the other partition chases the lines in a random order, timing each load
// (ld.global.cg, clock64). Its loads that reach the L2 (over kL2Floor cycles) are bimodal: near (the
// lines homed on its side) and far. On the H200 a quarter of all loads come back in under 100
// cycles and are left out (8192 of 32768 in every run: not explained), so the far share printed is
// of the rest (666, not the half homed on the reference's side).
//
// Usage: h100_far_hits PARTS   (PARTS: the file `h100_l2_partitions map PARTS` wrote)
// Prints scenario,param,value rows for each direction D (to1: partition 0's lines read from
// partition 1, to0: the other way), over PROBES probe SMs (param: the probe's index):
//   far_hits_<D>_near_cycles      the median latency of the probe's near loads
//   far_hits_<D>_far_cycles       the median latency of its far loads
//   far_hits_<D>_far_share_x1000  its far loads' share of the loads over kL2Floor cycles
// with comment lines naming the SMs and the threshold between near and far.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_far_hits.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <vector>

constexpr unsigned kLineWords = 32, kLines = (4u << 20) / 128, kProbes = 3, kL2Floor = 100;

// Every thread of the CTA on SM `target` reads a share of the lines once (the other CTAs return).
__global__ void k_reference(const unsigned* lines, unsigned n, unsigned target, unsigned* sink) {
  if (sm_id() != target) return;
  unsigned sum = 0;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) sum += ld_cg(lines + static_cast<size_t>(i) * kLineWords);
  if (sum == 0xffffffffu) sink[threadIdx.x] = sum;
}

// Thread 0 of the CTA on SM `target` chases the lines from line `first` (each line's first word is
// the next line's index), recording each load's latency.
// The loaded value goes to shared memory before the second clock read, so that read waits for the
// load (as h100_l2_partitions' map probe does).
__global__ void k_probe(const unsigned* lines, unsigned n, unsigned first, unsigned target, unsigned* lat) {
  __shared__ unsigned sink;
  if (sm_id() != target || threadIdx.x != 0) return;
  const unsigned sink_addr = smem_addr(&sink);
  unsigned line = first;
  for (unsigned k = 0; k < n; ++k) {
    const long long t0 = clock_now();
    line = ld_cg(lines + static_cast<size_t>(line) * kLineWords);
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(sink_addr), "r"(line) : "memory");
    lat[k] = static_cast<unsigned>(clock_now() - t0);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: h100_far_hits PARTS\n");
    return 2;
  }
  std::vector<unsigned> side[2];
  {
    std::ifstream f(argv[1]);
    unsigned sm, p, g;
    while (f >> sm >> p >> g) side[p ? 1 : 0].push_back(sm);
  }
  if (side[0].size() < kProbes + 1 || side[1].size() < kProbes + 1) {
    std::fprintf(stderr, "h100_far_hits: %s needs %u SMs of each partition\n", argv[1], kProbes + 1);
    return 1;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::vector<unsigned> order(kLines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(2026);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<unsigned> host(static_cast<size_t>(kLines) * kLineWords, 0);
  for (unsigned k = 0; k < kLines; ++k) host[static_cast<size_t>(order[k]) * kLineWords] = order[(k + 1) % kLines];
  unsigned *lines, *lat, *sink;
  CHECK(cudaMalloc(&lines, host.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(lines, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&lat, kLines * sizeof(unsigned)));
  CHECK(cudaMalloc(&sink, 1024 * sizeof(unsigned)));
  const size_t flush_bytes = size_t{256} << 20;
  unsigned* flush;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemset(flush, 1, flush_bytes));
  std::printf("scenario,param,value\n");
  for (int r = 0; r < 2; ++r) {  // the reference's partition; the probes are the other's
    const char* dir = r == 0 ? "to1" : "to0";
    for (unsigned i = 0; i < kProbes; ++i) {
      const unsigned ref = side[r][i], probe = side[1 - r][(i * side[1 - r].size()) / kProbes];
      k_reference<<<sms, 1024>>>(flush, static_cast<unsigned>(flush_bytes / 128), ref, sink);  // evicts the lines
      CHECK(cudaGetLastError());
      k_reference<<<sms, 1024>>>(lines, kLines, ref, sink);
      CHECK(cudaGetLastError());
      k_probe<<<sms, 32>>>(lines, kLines, order[0], probe, lat);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      std::vector<unsigned> l(kLines);
      CHECK(cudaMemcpy(l.data(), lat, kLines * sizeof(unsigned), cudaMemcpyDeviceToHost));
      // Near and far among the loads that reached the L2 (over kL2Floor cycles): split at the
      // largest gap between their 5th and 95th percentiles.
      std::vector<unsigned> sorted;
      for (unsigned v : l)
        if (v > kL2Floor) sorted.push_back(v);
      std::sort(sorted.begin(), sorted.end());
      const size_t m = sorted.size();
      unsigned threshold = m ? sorted[m / 2] : 0, gap = 0;
      for (size_t k = m / 20; k + 1 < m - m / 20; ++k)
        if (sorted[k + 1] - sorted[k] > gap) gap = sorted[k + 1] - sorted[k], threshold = (sorted[k] + sorted[k + 1]) / 2;
      std::vector<unsigned> near, far;
      for (unsigned v : sorted) (v > threshold ? far : near).push_back(v);
      std::printf("# %s,probe %u: reference_sm %u, probe_sm %u, loads under %u cycles %zu of %u, threshold %u, gap %u, "
                  "deciles", dir, i, ref, probe, kL2Floor, kLines - m, kLines, threshold, gap);
      for (int d = 0; d <= 10; ++d) std::printf(" %u", m ? sorted[std::min(m - 1, d * m / 10)] : 0);
      std::printf("\n");
      std::printf("far_hits_%s_near_cycles,%u,%u\n", dir, i, median(near));
      std::printf("far_hits_%s_far_cycles,%u,%u\n", dir, i, median(far));
      std::printf("far_hits_%s_far_share_x1000,%u,%zu\n", dir, i, m ? far.size() * 1000 / m : 0);
    }
  }
  CHECK(cudaFree(flush));
  CHECK(cudaFree(lines));
  CHECK(cudaFree(lat));
  CHECK(cudaFree(sink));
  return 0;
}
