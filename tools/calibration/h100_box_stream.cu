// h100_box_stream: what sets the rate at which one SM, or every SM at once, streams hot TMA boxes,
// one factor of the box or of the issuing loop at a time. Written for issue 15: B's boxes alone in
// the 8192^3 GEMM's tile order took 278 cycles per 16 KiB box on the H200 whatever the stages,
// the readers per line or the misses (run_loads_groups.sh), at 1 SM as at 132. The cause was the
// loop of h100_gemm_loads.cu: two run-time u32 divisions per load (i % S, (i - S) / S; ~65 cycles
// of latency each) between a stage's wait and its next load. The `divide` variants here keep
// such arithmetic. Without it this program still has a floor of about 405 cycles per stage at
// S >= 2 whatever the box's bytes (8, 16 or 32 KiB), which h100_gemm_loads.cu's lean loop does
// not (185 cycles per 16 KiB box at 1 SM, 6 stages; comment lines at the end of
// h200_box_stream.csv): its cause is not found, so these rows are a diagnostic, not a source for
// tma.bytes_per_cycle (README, "The producer loop's own cost").
//
// Kernel k_stream: GRID CTAs of 32 threads (at least 116 KiB of SMEM: one per SM); thread 0 streams LOADS
// boxes of R rows x 128 bytes through S stages (one mbarrier per stage, a stage reused once its
// box has landed) from one REGION of rows PITCH bytes apart, every CTA the same boxes in the same
// order: load i reads column i % (PITCH / 128) of row block (i / (PITCH / 128)) % (REGION / PITCH
// / R), so consecutive loads walk along the rows as a K-major operand's k-blocks do (PITCH 128:
// contiguous boxes, walking down the region). The region is hot in the L2 (one warm-up launch).
//
// Prints rows box_stream_<variant>_g<GRID>_bytes_per_cycle_x100,<S>,<value>: bytes delivered per
// SM per cycle x 100, from the first CTA's start to the last one's end (%globaltimer) at the clock
// the CTAs' clock64 ran at over their spans (a comment line gives it), best of three launches.
// Variants (one factor from the base at a time):
//   base      uint8 box {128, 128} (16 KiB), promotion 128B, pitch 16384, region 2 MiB
//   pitch128  base with pitch 128 (contiguous)
//   bf16      a bf16 map, box {64, 128} (the GEMM's element type)
//   p256      promotion 256B (the GEMM's)
//   gemm      bf16 and 256B (the GEMM's B box)
//   r8m       an 8 MiB region
//   box32k    box {128, 256} (32 KiB), pitch 128, region 8 MiB: h100_ubench.cu's tma_stream_one_sm
//   gemm_random, gemm_spin, gemm_two_maps, gemm_random_spin: gemm with varied data (every byte 1
//             otherwise), waiting with mbarrier.test_wait in a loop (try_wait otherwise), and odd
//             loads through a second map of the same region (__grid_constant__, as A's and B's)
//   gemm_x2, gemm_x4: 2 or 4 boxes per stage on its one mbarrier (as a GEMM stage holds A and B)
//   gemm_r64, gemm_r256: boxes of 64 and 256 rows (8 and 32 KiB; r256 over a 4 MiB region)
//   gemm_divide, box32k_divide: gemm and box32k with the loop's stage, parity and coordinates
//             computed by run-time division (as this program's first version did)
// each at S = 1, 2, 3, 4, 6 (where S stages fit 200 KiB) and GRID 1 and 132. A comment line per
// row: the clock, and from a fifth launch that stores a log (CTA 0's stages 128-191: the clock
// at issue and at the wait's return), the cycles from issue to return and between returns (p10,
// p50, p90).
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_box_stream.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cstdio>
#include <vector>

constexpr unsigned kLoads = 1024;

// clocks[c] = {start ns, start clock, end ns, end clock}; log (CTA 0): for stages kLogFirst.. the
// clock at their loads' issue and when their wait returned (with log_on; otherwise nothing is stored
// in the loop). A stage holds per_stage boxes on one mbarrier (kLoads boxes in all).
constexpr unsigned kLogFirst = 128, kLogCount = 64;
template <bool kTwoMaps>
__global__ void k_stream(const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap map2,
                         unsigned box_rows, unsigned stages, unsigned per_stage, unsigned pitch, unsigned row_blocks,
                         unsigned spin, unsigned divide, unsigned log_on, long long* clocks, long long* log) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned box_bytes = box_rows * 128, stage_bytes = per_stage * box_bytes, cols = pitch / 128;
  const unsigned base = init_stage_ring(smem, stages, stage_bytes), bars = base + stages * stage_bytes;
  const unsigned rounds = kLoads / per_stage;
  const bool logging = log_on && blockIdx.x == 0;
  long long* c = clocks + 4 * blockIdx.x;
  c[0] = static_cast<long long>(globaltimer());
  c[1] = clock64();
  // Counters, not divisions (a run-time u32 division is ~65 cycles of latency): the stage s and its
  // parity, the box's column and row block. `divide` derives all four from the indices instead,
  // as this program's first version and h100_gemm_loads.cu before 2026-11-28 did.
  unsigned s = 0, odd = 0, col = 0, block = 0, i = 0;
  for (unsigned j = 0; j < rounds + stages; ++j) {
    if (divide) {
      s = j % stages;
      odd = (j / stages) & 1u;
    }
    if (j >= stages) {
      if (spin) {
        while (!mbar_test_wait(bars + 8 * s, odd ^ 1u)) {
        }
      }
      else mbar_wait(bars + 8 * s, odd ^ 1u);
      const unsigned done = j - stages;
      if (logging && done >= kLogFirst && done < kLogFirst + kLogCount) log[2 * (done - kLogFirst) + 1] = clock64();
    }
    if (j < rounds) {
      if (logging && j >= kLogFirst && j < kLogFirst + kLogCount) log[2 * (j - kLogFirst)] = clock64();
      mbar_arrive_expect_tx(bars + 8 * s, stage_bytes);
      for (unsigned b = 0; b < per_stage; ++b, ++i) {
        if (divide) {
          col = i % cols;
          block = (i / cols) % row_blocks;
        }
        const unsigned dst = base + s * stage_bytes + b * box_bytes, bar = bars + 8 * s;
        const int x = static_cast<int>(col * 128), y = static_cast<int>(block * box_rows);
        if (kTwoMaps && (i & 1)) tma_load_2d(dst, &map2, x, y, bar);
        else tma_load_2d(dst, &map, x, y, bar);
        if (++col == cols) {
          col = 0;
          if (++block == row_blocks) block = 0;
        }
      }
    }
    if (++s == stages) {
      s = 0;
      odd ^= 1u;
    }
  }
  c[3] = clock64();
  c[2] = static_cast<long long>(globaltimer());
}

__global__ void k_random(unsigned* p, size_t words) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<unsigned>(i * 2654435761u) ^ static_cast<unsigned>(i >> 7) * 40503u;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device,%s,sms,%d\nscenario,param,value\n", prop.name, prop.multiProcessorCount);
  const unsigned long long max_region = 8ull << 20;
  void *ones, *random;  // the region's data: every byte 1, or varied words
  CHECK(cudaMalloc(&ones, max_region));
  CHECK(cudaMemset(ones, 1, max_region));
  CHECK(cudaMalloc(&random, max_region));
  k_random<<<256, 256>>>(static_cast<unsigned*>(random), max_region / 4);
  long long* log;
  CHECK(cudaMalloc(&log, 2 * kLogCount * sizeof(long long)));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  long long* clocks;
  CHECK(cudaMalloc(&clocks, 4 * sms * sizeof(long long)));
  CHECK(cudaFuncSetAttribute(k_stream<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CHECK(cudaFuncSetAttribute(k_stream<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  struct Variant {
    const char* name;
    bool bf16;
    CUtensorMapL2promotion promotion;
    unsigned pitch, box_rows;
    unsigned long long region;
    bool random, spin, two_maps;
    unsigned per_stage;
    bool divide;
  };
  const auto p128 = CU_TENSOR_MAP_L2_PROMOTION_L2_128B, p256 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  const Variant variants[] = {
      {"base", false, p128, 16384, 128, 2ull << 20, false, false, false, 1, false},
      {"pitch128", false, p128, 128, 128, 2ull << 20, false, false, false, 1, false},
      {"bf16", true, p128, 16384, 128, 2ull << 20, false, false, false, 1, false},
      {"p256", false, p256, 16384, 128, 2ull << 20, false, false, false, 1, false},
      {"gemm", true, p256, 16384, 128, 2ull << 20, false, false, false, 1, false},
      {"r8m", false, p128, 16384, 128, 8ull << 20, false, false, false, 1, false},
      {"box32k", false, p128, 128, 256, 8ull << 20, false, false, false, 1, false},
      {"gemm_random", true, p256, 16384, 128, 2ull << 20, true, false, false, 1, false},
      {"gemm_spin", true, p256, 16384, 128, 2ull << 20, false, true, false, 1, false},
      {"gemm_two_maps", true, p256, 16384, 128, 2ull << 20, false, false, true, 1, false},
      {"gemm_random_spin", true, p256, 16384, 128, 2ull << 20, true, true, false, 1, false},
      {"gemm_x2", true, p256, 16384, 128, 2ull << 20, false, false, false, 2, false},
      {"gemm_x4", true, p256, 16384, 128, 2ull << 20, false, false, false, 4, false},
      {"gemm_r64", true, p256, 16384, 64, 2ull << 20, false, false, false, 1, false},
      {"gemm_r256", true, p256, 16384, 256, 4ull << 20, false, false, false, 1, false},
      {"gemm_divide", true, p256, 16384, 128, 2ull << 20, false, false, false, 1, true},
      {"box32k_divide", false, p128, 128, 256, 8ull << 20, false, false, false, 1, true},
  };
  for (const Variant& v : variants) {
    void* buf = v.random ? random : ones;
    const CUtensorMap map = make_strided_map(buf, v.pitch, v.region / v.pitch, v.box_rows, v.promotion, v.bf16);
    const unsigned row_blocks = static_cast<unsigned>(v.region / v.pitch / v.box_rows);
    for (const unsigned grid : {1u, sms}) {
      for (const unsigned stages : {1u, 2u, 3u, 4u, 6u}) {
        const unsigned stage_bytes = v.per_stage * v.box_rows * 128;
        if (stages * stage_bytes + 2048 > 200 * 1024) continue;
        // at least 116 KiB, so that one CTA fits an SM
        const unsigned smem = std::max(116u * 1024, stages * stage_bytes + 2048);
        double best = 0, best_mhz = 0;
        for (int rep = 0; rep < 5; ++rep) {  // the first warms the L2; the best of the next three kept; the
                                             // fifth, with the log, gives the comment line
          (v.two_maps ? k_stream<true> : k_stream<false>)<<<grid, 32, smem>>>(
              map, map, v.box_rows, stages, v.per_stage, v.pitch, row_blocks, v.spin ? 1u : 0u, v.divide ? 1u : 0u,
              rep == 4 ? 1u : 0u, clocks, log);
          CHECK(cudaGetLastError());
          CHECK(cudaDeviceSynchronize());
          std::vector<long long> c(4 * grid);
          CHECK(cudaMemcpy(c.data(), clocks, c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
          long long t0 = c[0], t1 = c[2];
          double mhz = 0;  // the CTAs' mean clock over their own spans
          for (unsigned b = 0; b < grid; ++b) {
            t0 = std::min(t0, c[4 * b]);
            t1 = std::max(t1, c[4 * b + 2]);
            mhz += static_cast<double>(c[4 * b + 3] - c[4 * b + 1]) / static_cast<double>(c[4 * b + 2] - c[4 * b]) * 1000;
          }
          mhz /= grid;
          const double per_sm_cycle =
              static_cast<double>(kLoads) * v.box_rows * 128 / (static_cast<double>(t1 - t0) * mhz / 1000);
          if (rep > 0 && rep < 4 && per_sm_cycle > best) {
            best = per_sm_cycle;
            best_mhz = mhz;
          }
        }
        std::printf("box_stream_%s_g%u_bytes_per_cycle_x100,%u,%lld\n", v.name, grid, stages,
                    static_cast<long long>(best * 100));
        std::vector<long long> l(2 * kLogCount);  // the last launch's CTA 0: issue-to-return, return gaps
        CHECK(cudaMemcpy(l.data(), log, l.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        std::vector<long long> lat, gap;
        for (unsigned j = 0; j < kLogCount; ++j) lat.push_back(l[2 * j + 1] - l[2 * j]);
        for (unsigned j = 1; j < kLogCount; ++j) gap.push_back(l[2 * j + 1] - l[2 * j - 1]);
        std::sort(lat.begin(), lat.end());
        std::sort(gap.begin(), gap.end());
        std::printf("# box_stream_%s_g%u,%u: clock_mhz %.0f; a launch storing a log: CTA 0's stages %u-%u, issue to wait "
                    "return p10 %lld p50 %lld p90 %lld, between returns p10 %lld p50 %lld p90 %lld\n",
                    v.name, grid, stages, best_mhz, kLogFirst, kLogFirst + kLogCount - 1, lat[6], lat[32], lat[57],
                    gap[6], gap[31], gap[56]);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
