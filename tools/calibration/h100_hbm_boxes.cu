// HBM reads of GEMM operand boxes: G SMs each read 4 MiB of distinct, HBM-resident data as TMA
// boxes of 128 rows x 128 B (16 KiB, a bf16 128x64 K-major operand tile) whose rows lie `W` bytes
// apart in memory, with 1, 2 or 4 boxes in flight per SM. W = 128 is contiguous data; W = 8192,
// 16384, 32768 are the row strides of a K-major bf16 operand with K = 4096, 8192, 16384 (the
// gemm_sm90 rows); W = 33024 is 32768 + 256 (not a power of two). Prints CSV: scenario,param,value
// (comment lines start with '#'); each row below is a program the simulator reproduces.
//
// Tensor map (calibration_ptx.cuh's make_strided_map): uint8, dims {W, R}, row stride W, box {128, 128},
// SWIZZLE_128B, L2 promotion 256B (as gemm_sm90_twin.cu's operand maps; the _p128 rows: 128B),
// OOB fill none. Loads by
// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes into 1024-byte
// aligned SMEM, completion by mbarrier.try_wait.parity loops.
//
// Placement of the data: a box column holds n = min(W / 128, 256) boxes side by side (x = 0,
// 128, .., 128 (n-1)), a CTA's 4 MiB = 256 boxes = 256 / n row blocks of 128 rows. CTA c's load k
// (k = 0..255) reads the box at x = 128 (k % n), y = 128 (c (256 / n) + k / n): with W = 32768 the
// CTA walks along one 128-row band (the M tile of a GEMM CTA stepping through K), all CTAs at the
// same k at once; with W = 128 it reads its 4 MiB front to back. R = G (256 / n) 128 rows.
//
// The program (k_boxes): one launch of G CTAs of 32 threads (each asks for 133120 B of dynamic
// SMEM, so one per SM; the host checks the %smid values differ); thread 0 of each: init S
// mbarriers (count 1), fence.mbarrier_init; %globaltimer and clock64; 256 loads through S stages
// (load k to stage k % S, issued once the stage's previous box has arrived: arrive.expect_tx 16384
// + the load); wait for the last S; %globaltimer and clock64 again.
// Before every launch the L2 is flushed (cudaMemset of a 256 MiB scratch buffer, 5x the L2), so
// every box comes from HBM.
//
// Rows (param = G in 1, 16, 66, 132; W in the name; rows ending _p128 are W = 32768 with L2
// promotion 128B):
// - tma_hbm_box_latency_w<W>: S = 1, the CTA's (clock64 delta) / 256 = cycles per dependent
//   load; value = the median over the G CTAs.
// - tma_hbm_box_stream_w<W>_s<S>_bytes_per_cycle_x100, S = 2, 4: G * 4 MiB / (latest CTA end -
//   earliest start, %globaltimer ns) / (clock MHz / 1000) x 100: bytes per SM cycle, all SMs.
// Each row: 3 launches; the value is the median. A comment follows each row: the clock (median of
// the CTAs' clock64 delta / %globaltimer delta, MHz) and the three launch values.
//
// Shared helpers (CHECK, make_strided_map, CtaTiming, read_cta_timings, median, sm_id, smem_addr, mbar_*, fence_mbar_init, globaltimer,
// tma_load_2d) come from calibration_ptx.cuh.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_hbm_boxes.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <vector>

constexpr unsigned kBox = 16384, kLoads = 256, kSmem = 4 * kBox + 67584;  // > half an SM's SMEM
constexpr size_t kFlushBytes = 256ull << 20;

__global__ void k_boxes(const __grid_constant__ CUtensorMap map, unsigned n, unsigned stages, CtaTiming* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned smid = sm_id();
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bars = base + 4 * kBox;
  for (unsigned s = 0; s < stages; ++s) mbar_init(bars + 8 * s, 1);
  fence_mbar_init();
  const unsigned band = blockIdx.x * (kLoads / n);
  const unsigned long long ns0 = globaltimer();
  const long long c0 = clock64();
  for (unsigned k = 0; k < kLoads + stages; ++k) {
    const unsigned s = k % stages;
    if (k >= stages) mbar_wait(bars + 8 * s, ((k - stages) / stages) & 1u);
    if (k >= kLoads) continue;
    mbar_arrive_expect_tx(bars + 8 * s, kBox);
    tma_load_2d(base + s * kBox, &map, static_cast<int>(128 * (k % n)), static_cast<int>(128 * (band + k / n)),
                bars + 8 * s);
  }
  const unsigned long long ns1 = globaltimer();
  out[blockIdx.x] = CtaTiming{static_cast<long long>(ns0), static_cast<long long>(ns1), c0, clock64(), smid};
}

struct Launch {
  double latency;  // median over CTAs of cycles per load
  double bpc;      // aggregate bytes per SM cycle
  double mhz;
};

Launch launch(const CUtensorMap& map, unsigned n, unsigned g, unsigned stages, CtaTiming* dout, void* flush) {
  CHECK(cudaMemset(flush, 1, kFlushBytes));
  CHECK(cudaMemset(dout, 0, sizeof(CtaTiming) * g));
  k_boxes<<<g, 32, kSmem>>>(map, n, stages, dout);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<double> lat, mhz;
  long long start = 0x7fffffffffffffffll, end = 0;
  for (const CtaTiming& t : read_cta_timings(dout, g)) {
    lat.push_back(t.cycles() / kLoads);
    mhz.push_back(t.mhz());
    start = std::min(start, t.ns0);
    end = std::max(end, t.ns1);
  }
  Launch r;
  r.latency = median(lat);
  r.mhz = median(mhz);
  r.bpc = static_cast<double>(g) * kLoads * kBox / static_cast<double>(end - start) / (r.mhz / 1000.0);
  return r;
}

int main() {
  CHECK(cudaFuncSetAttribute(k_boxes, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const unsigned grids[] = {1, 16, 66, 132};
  const unsigned long long widths[] = {128, 8192, 16384, 32768, 33024};
  void* flush;
  CHECK(cudaMalloc(&flush, kFlushBytes));
  CtaTiming* dout;
  CHECK(cudaMalloc(&dout, sizeof(CtaTiming) * 132));
  std::printf("scenario,param,value\n");
  for (unsigned v = 0; v < 6; ++v) {
    // five widths with L2 promotion 256B, then W = 32768 again with promotion 128B (suffix _p128)
    const unsigned long long w = v < 5 ? widths[v] : 32768;
    const char* suffix = v < 5 ? "" : "_p128";
    const unsigned n = static_cast<unsigned>(std::min<unsigned long long>(w / 128, 256));
    const unsigned long long rows = 132ull * (kLoads / n) * 128;
    void* data;
    CHECK(cudaMalloc(&data, w * rows));
    CHECK(cudaMemset(data, 0, w * rows));
    const CUtensorMap map = make_strided_map(data, w, rows, 128,
                                             v < 5 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    for (unsigned stages : {1u, 2u, 4u}) {
      for (unsigned g : grids) {
        std::vector<Launch> runs;
        for (int l = 0; l < 3; ++l) runs.push_back(launch(map, n, g, stages, dout, flush));
        std::vector<double> v;
        for (const Launch& r : runs) v.push_back(stages == 1 ? r.latency : 100.0 * r.bpc);
        std::vector<double> sorted = v;
        if (stages == 1) std::printf("tma_hbm_box_latency_w%llu%s,%u,%.0f\n", w, suffix, g, median(sorted));
        else
          std::printf("tma_hbm_box_stream_w%llu%s_s%u_bytes_per_cycle_x100,%u,%.0f\n", w, suffix, stages, g,
                      median(sorted));
        std::printf("# clock_mhz %.0f, launch values %.0f %.0f %.0f\n", runs[1].mhz, v[0], v[1], v[2]);
        std::fflush(stdout);
      }
    }
    CHECK(cudaFree(data));
  }
  return 0;
}
