// Does the number of 2 MiB pages an SM's TMA boxes lie in cost it rate? Under a loaded L2 the
// H200's SMs keep per-SM paces that follow the addresses their private data lies at, from launch
// to launch and process to process (run_pace_persistence.sh), yet the lines' L2 partitions are
// balanced in every region (--probe-homes). An address translation shared by a GPC's SMs would
// make pace depend on the pages read and be the same wherever the data lies physically.
//
// Data: rows 16 KiB apart (a K-major bf16 operand of K 8192, as the GEMM row's A and B), read 128
// bytes (one line) wide; a box is 128 rows (16 KiB), so one box spans exactly one 2 MiB page.
// Every CTA (one per SM, or one CTA alone) keeps STAGES boxes in flight through one thread and
// cycles over P boxes of its own:
//   pages:   box b of CTA c is line 0 of the 128 rows of page c * P + b: P pages per SM;
//   columns: box b of CTA c is line b of the 128 rows of page c: one page per SM, as many bytes.
// A warm-up launch makes the boxes L2 hits (up to P 16: at 32, 66 MiB, the L2 keeps too little and
// the rows are HBM's). Prints scenario,param,value rows (param: P):
//   tma_pages_<pages|columns>_all_bytes_per_cycle_x100   132 SMs, 6 stages (96 KiB in flight):
//       all CTAs' bytes over the slowest CTA's span (clock64, its first issue to its last landing)
//   tma_pages_<pages|columns>_all_gpc_spread_x1000       the standard deviation of the GPCs'
//       mean spans over the median CTA's (the GPCs by the H200's map, h200_gpc_map_loads.csv:
//       gpc_of below)
//   tma_pages_<pages|columns>_one_cycles_per_box_x100    one CTA alone, 1 stage: each box's
//       latency (its span over the boxes), P 1 / 4 / 16 / 64 (and 256 pages)
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_tma_pages.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

constexpr unsigned kPitch = 16384, kBoxRows = 128, kBoxBytes = kBoxRows * 128, kPageRows = 128;
constexpr unsigned kMaxPagesPerSm = 32, kLoadsAll = 2048, kLoadsOne = 1024;

// timing per CTA: smid, first issue clock64, last landing clock64.
__global__ void k_pages(const __grid_constant__ CUtensorMap map, unsigned pages, bool columns, unsigned stages,
                        unsigned loads, long long* timing) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = init_stage_ring(smem, stages, kBoxBytes);
  const unsigned c = blockIdx.x;
  const unsigned bars = base + stages * kBoxBytes;
  const long long t0 = clock64();
  // P is a power of two: the box index is masked and the stage and its parity counted, not divided
  // (a run-time division per load bounds the loop near 260 cycles per box: README, "The producer
  // loop's own cost").
  unsigned s = 0, parity = 0;
  for (unsigned i = 0; i < loads + stages; ++i) {
    if (i >= stages) mbar_wait(bars + 8 * s, parity);
    if (i < loads) {
      const unsigned b = i & (pages - 1);
      mbar_arrive_expect_tx(bars + 8 * s, kBoxBytes);
      if (columns)
        tma_load_2d(base + s * kBoxBytes, &map, static_cast<int>(b * 128), static_cast<int>(c * kPageRows), bars + 8 * s);
      else
        tma_load_2d(base + s * kBoxBytes, &map, 0, static_cast<int>((c * pages + b) * kPageRows), bars + 8 * s);
    }
    if (++s == stages) {
      s = 0;
      if (i >= stages) parity ^= 1u;
    }
  }
  timing[3 * c] = sm_id();
  timing[3 * c + 1] = t0;
  timing[3 * c + 2] = clock64();
}

// The H200's GPC of SM `sm` (h200_gpc_map_loads.csv, the same on the H200s we ran): TPC pairs
// (smid / 2) go round GPCs 0-7 up to smid 63, then GPCs 1-7 up to 119; 120-121 are GPC 6's,
// 122-123 GPC 7's, and 124-131 GPC 0's loose TPCs.
unsigned gpc_of(unsigned sm) {
  if (sm >= 124) return 0;
  if (sm >= 120) return 6 + (sm - 120) / 2;
  if (sm >= 64) return 1 + (sm - 64) % 14 / 2;
  return sm % 16 / 2;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("# device,%s,sms,%u\nscenario,param,value\n", prop.name, sms);
  const unsigned long long rows = static_cast<unsigned long long>(sms) * kMaxPagesPerSm * kPageRows;
  void* buf;
  CHECK(cudaMalloc(&buf, rows * kPitch));
  const CUtensorMap map = make_strided_map(buf, kPitch, rows, kBoxRows, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  long long* timing;
  CHECK(cudaMalloc(&timing, 3 * sms * sizeof(long long)));
  std::vector<long long> h(3 * sms);
  auto run = [&](unsigned grid, unsigned pages, bool columns, unsigned stages, unsigned loads) {
    const unsigned smem = stages * kBoxBytes + 2048;
    CHECK(cudaFuncSetAttribute(k_pages, cudaFuncAttributeMaxDynamicSharedMemorySize, std::max(smem, 116u * 1024)));
    for (int rep = 0; rep < 2; ++rep) {  // the first makes the boxes hot
      k_pages<<<grid, 32, std::max(smem, 116u * 1024)>>>(map, pages, columns, stages, loads, timing);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaMemcpy(h.data(), timing, 3 * grid * sizeof(long long), cudaMemcpyDeviceToHost));
  };
  for (const bool columns : {false, true}) {
    const char* name = columns ? "columns" : "pages";
    for (unsigned pages = 1; pages <= kMaxPagesPerSm; pages *= 2) {
      run(sms, pages, columns, 6, kLoadsAll);
      std::vector<double> span(sms);
      for (unsigned c = 0; c < sms; ++c) span[c] = static_cast<double>(h[3 * c + 2] - h[3 * c + 1]);
      std::vector<double> sorted = span;
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted[sms / 2], slowest = sorted.back();
      std::vector<double> sum(8, 0.0), n(8, 0.0);
      for (unsigned c = 0; c < sms; ++c) {
        const unsigned g = gpc_of(static_cast<unsigned>(h[3 * c]));
        sum[g] += span[c] / median;
        n[g] += 1;
      }
      double mean = 0, var = 0;
      for (unsigned g = 0; g < 8; ++g) mean += sum[g] / n[g] / 8;
      for (unsigned g = 0; g < 8; ++g) var += (sum[g] / n[g] - mean) * (sum[g] / n[g] - mean) / 8;
      std::printf("tma_pages_%s_all_bytes_per_cycle_x100,%u,%.0f\n", name, pages,
                  100.0 * sms * kLoadsAll * kBoxBytes / slowest);
      std::printf("tma_pages_%s_all_gpc_spread_x1000,%u,%.0f\n", name, pages, 1000.0 * std::sqrt(var));
      std::fflush(stdout);
    }
    // one CTA: up to 256 pages, or up to 64 of the 128 lines of one page's rows
    for (unsigned pages = 1; pages <= (columns ? 64u : 256u); pages *= 4) {
      run(1, pages, columns, 1, kLoadsOne);
      std::printf("tma_pages_%s_one_cycles_per_box_x100,%u,%.0f\n", name, pages,
                  100.0 * static_cast<double>(h[2] - h[1]) / kLoadsOne);
      std::fflush(stdout);
    }
  }
  CHECK(cudaFree(buf));
  CHECK(cudaFree(timing));
  return 0;
}
