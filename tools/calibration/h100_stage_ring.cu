// A GEMM mainloop's memory side without the MMA: G SMs each step through K = 256 k-blocks of a
// 2- or 4-stage ring, each stage holding the k-block's A box (16 KiB from HBM, the SM's own rows,
// rows 32 KiB apart: a bf16 K-major operand with K = 16384) and/or its B box (32 KiB, 256 rows of
// an 8 MiB operand every SM reads at the same k: resident in the L2 after the warm-up launch when
// read alone; beside A, whose stream evicts it between launches, its first reader misses), as
// gemm_sm90_twin.cu's cooperative 128x256 tile at M = 128 G, N = 256, K = 16384 (the
// h100_gemm_scaling.csv rows). The tensor pipe is a clock: k-block k's "MMA" starts once its
// stage is full and MMA k-1 has run `mma` cycles (1024 = a 128x256x64 bf16 wgmma k-block at
// 4096 FLOP per cycle), and its start releases stage (k-1) % S, which is then refilled with
// k-block k-1+S, as the twin's consumer releases the previous stage after wgmma.wait_group 1.
// Prints CSV: scenario,param,value (param = G in 1, 16, 66, 132):
// - stage_ring_<parts>_s<S>_cycles_per_kblock, parts a (A only), b (B only), ab (both): the
//   median over the CTAs of (clock64 at the end - at the start) / 256.
// Each row: 3 launches; the value is the median; a comment gives the clock (median MHz over the
// CTAs' clock64 / %globaltimer) and the three values. No L2 flush: A (G x 4 MiB, read once) misses
// anyway; B is read by every SM as in the GEMM (see h100_stage_parts.cu for hot and cold B).
// --cta-log FILE: each CTA's own cycles per k-block and SM in the three launches of every G = 132
// row, as CSV parts,stages,launch,cta,smid,cycles_per_kblock (a 132-CTA grid fills the GPCs in
// CTA blocks, `gpc_tpcs` in h100.yaml: tools/calibration/gpc_pace.py groups them by GPC).
// --a-share own|cross|tpc: A's rows per CTA (a_band below): its own (the rows above), CTA c % 64's
// (c and c + 64 read the same rows in step, from different GPCs), or its TPC pair's (c / 2); the
// scenarios of cross and tpc are named stage_ring_<parts>_cross_... and ..._tpc_....
//
// Shared helpers (CHECK, make_strided_map, CtaTiming, read_cta_timings, median, sm_id, smem_addr, mbar_*, fence_mbar_init,
// globaltimer, tma_load_2d) come from calibration_ptx.cuh. Map: L2 promotion 256B, as the twin.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_stage_ring.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

constexpr unsigned kA = 16384, kB = 32768, kStage = kA + kB, kSteps = 256, kMaxStages = 4;
constexpr unsigned kSmem = kMaxStages * kStage + 2048;
constexpr unsigned long long kWidth = 32768;  // K = 16384 bf16: 256 k-blocks of 128 B

__device__ __forceinline__ void load_stage(const CUtensorMap* a, const CUtensorMap* b, unsigned parts, unsigned dst,
                                           unsigned bar, unsigned k, unsigned band) {
  mbar_arrive_expect_tx(bar, ((parts & 1) ? kA : 0) + ((parts & 2) ? kB : 0));
  if (parts & 1) tma_load_2d(dst, a, static_cast<int>(128 * k), static_cast<int>(128 * band), bar);
  if (parts & 2) tma_load_2d(dst + kA, b, static_cast<int>(128 * k), 0, bar);
}

// Which band of A rows a CTA reads (--a-share): its own; that of CTA c % 64, so CTAs c and c + 64
// (different GPCs, as the two readers of an A tile in gemm_sm90_twin's swizzle-1 order) read the
// same rows in step; or that of its TPC's pair (c / 2, as under swizzle 2).
enum class AShare : unsigned { Own, Cross, Tpc };
__device__ __forceinline__ unsigned a_band(AShare share) {
  return share == AShare::Cross ? blockIdx.x % 64 : share == AShare::Tpc ? blockIdx.x / 2 : blockIdx.x;
}

__global__ void k_ring(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b, unsigned parts,
                       unsigned stages, long long mma, AShare share, CtaTiming* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned smid = sm_id();
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bars = base + kMaxStages * kStage;
  for (unsigned s = 0; s < stages; ++s) mbar_init(bars + 8 * s, 1);
  fence_mbar_init();
  const unsigned long long ns0 = globaltimer();
  const long long c0 = clock64();
  for (unsigned k = 0; k < stages; ++k) load_stage(&a, &b, parts, base + k * kStage, bars + 8 * k, k, a_band(share));
  long long mma_end = 0;
  for (unsigned k = 0; k < kSteps; ++k) {
    mbar_wait(bars + 8 * (k % stages), (k / stages) & 1u);
    while (clock64() < mma_end) {
    }
    mma_end = clock64() + mma;  // MMA k starts: MMA k-1 is done, so stage (k-1) % S is free
    const unsigned refill = k - 1 + stages;
    if (k >= 1 && refill < kSteps) {
      const unsigned s = (k - 1) % stages;
      load_stage(&a, &b, parts, base + s * kStage, bars + 8 * s, refill, a_band(share));
    }
  }
  while (clock64() < mma_end) {
  }
  const unsigned long long ns1 = globaltimer();
  out[blockIdx.x] = CtaTiming{static_cast<long long>(ns0), static_cast<long long>(ns1), c0, clock64(), smid};
}

struct Launch {
  double per_kblock, mhz;
  std::vector<CtaTiming> ctas;
};

Launch launch(const CUtensorMap& a, const CUtensorMap& b, unsigned parts, unsigned g, unsigned stages, AShare share,
              CtaTiming* dout) {
  CHECK(cudaMemset(dout, 0, sizeof(CtaTiming) * g));
  k_ring<<<g, 32, kSmem>>>(a, b, parts, stages, 1024, share, dout);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<double> per, mhz;
  std::vector<CtaTiming> ctas = read_cta_timings(dout, g);
  for (const CtaTiming& t : ctas) {
    per.push_back(t.cycles() / kSteps);
    mhz.push_back(t.mhz());
  }
  return Launch{median(per), median(mhz), std::move(ctas)};
}

int main(int argc, char** argv) {
  FILE* cta_log = nullptr;
  AShare share = AShare::Own;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--a-share") {
      const std::string v = argv[i + 1];
      share = v == "cross" ? AShare::Cross : v == "tpc" ? AShare::Tpc : AShare::Own;
      if (v != "cross" && v != "tpc" && v != "own") {
        std::fprintf(stderr, "--a-share: own, cross or tpc\n");
        return 1;
      }
    } else if (std::string(argv[i]) == "--cta-log") {
      cta_log = std::fopen(argv[i + 1], "w");
      if (!cta_log) {
        std::fprintf(stderr, "cannot write %s\n", argv[i + 1]);
        return 1;
      }
      std::fprintf(cta_log, "parts,stages,launch,cta,smid,cycles_per_kblock\n");
    }
  CHECK(cudaFuncSetAttribute(k_ring, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const unsigned long long a_rows = 132ull * 128, b_rows = 256;
  void *a_data, *b_data;
  CHECK(cudaMalloc(&a_data, kWidth * a_rows));
  CHECK(cudaMalloc(&b_data, kWidth * b_rows));
  CHECK(cudaMemset(a_data, 0, kWidth * a_rows));
  CHECK(cudaMemset(b_data, 0, kWidth * b_rows));
  const CUtensorMap a = make_strided_map(a_data, kWidth, a_rows, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  const CUtensorMap b = make_strided_map(b_data, kWidth, b_rows, 256, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  CtaTiming* dout;
  CHECK(cudaMalloc(&dout, sizeof(CtaTiming) * 132));
  std::printf("scenario,param,value\n");
  const char* names[] = {"", "a", "b", "ab"};
  const char* share_names[] = {"", "_cross", "_tpc"};
  for (unsigned parts : {1u, 2u, 3u}) {
    for (unsigned stages : {2u, 4u}) {
      for (unsigned g : {1u, 16u, 66u, 132u}) {
        launch(a, b, parts, g, stages, share, dout);  // warm-up: B into the L2
        std::vector<Launch> runs;
        for (int l = 0; l < 3; ++l) runs.push_back(launch(a, b, parts, g, stages, share, dout));
        std::vector<double> v;
        for (const Launch& r : runs) v.push_back(r.per_kblock);
        std::vector<double> sorted = v;
        std::printf("stage_ring_%s%s_s%u_cycles_per_kblock,%u,%.0f\n", names[parts], share_names[static_cast<unsigned>(share)],
                    stages, g, median(sorted));
        std::printf("# clock_mhz %.0f, launch values %.0f %.0f %.0f\n", runs[1].mhz, v[0], v[1], v[2]);
        std::fflush(stdout);
        if (cta_log && g == 132)
          for (int l = 0; l < 3; ++l)
            for (unsigned c = 0; c < g; ++c)
              std::fprintf(cta_log, "%s%s,%u,%d,%u,%lld,%.1f\n", names[parts], share_names[static_cast<unsigned>(share)],
                           stages, l, c, runs[l].ctas[c].smid,
                           runs[l].ctas[c].cycles() / kSteps);
      }
    }
  }
  if (cta_log) std::fclose(cta_log);
  return 0;
}
