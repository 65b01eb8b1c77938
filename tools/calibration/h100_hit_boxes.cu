// What an L2 hit costs a strided TMA box (a K-major operand's rows, `width` bytes apart) against
// the contiguous box of the same bytes that tma_2d_latency_l2 times: one CTA on an idle chip.
// Prints CSV: scenario,param,value:
// - tma_hit_box_latency_w<W>,<R>: a box of R rows x 128 B, rows W bytes apart (W = 128:
//   contiguous), loaded again and again at the same coordinates (hot in the L2): cycles from
//   arrive.expect_tx to the mbarrier wait's return, the mean of 40 loads after 8 warm-up ones.
// - tma_cold_box_latency_w32768_p<P>,128: a 128-row box of rows never read, with L2 promotion P
//   (128 or 256 bytes): the HBM miss.
// - tma_promoted_box_latency_w32768,<D>: after each cold 128-row box with 256B promotion
//   completes and D more cycles pass, the box of the next 128-byte column: lines the miss
//   promoted into the L2 (D = 0, 4000).
// Each value the median of 3 launches. Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a
// h100_hit_boxes.cu -lcuda
#include "calibration_ptx.cuh"

#include <vector>

constexpr unsigned kIters = 40, kWarm = 8;

// mode 0: the same box every time; mode 1: a cold box per iteration (rows 128 * i on), timed;
// mode 2: a cold box per iteration untimed, then `delay` cycles, then the next column's box timed.
__global__ void k_box(const __grid_constant__ CUtensorMap map, unsigned box_bytes, unsigned mode, unsigned delay,
                      long long* out) {
  extern __shared__ unsigned char smem[];
  const unsigned dst = (smem_addr(smem) + 1023) & ~1023u, bar = dst + box_bytes;
  if (threadIdx.x != 0) return;
  mbar_init(bar, 1);
  fence_mbar_init();
  unsigned phase = 0;
  auto load = [&](int x, int y) {
    const long long t0 = clock64();
    mbar_arrive_expect_tx(bar, box_bytes);
    tma_load_2d(dst, &map, x, y, bar);
    mbar_wait(bar, phase);
    phase ^= 1;
    return clock64() - t0;
  };
  long long total = 0;
  for (unsigned i = 0; i < kIters + kWarm; ++i) {
    const int y = mode == 0 ? 0 : static_cast<int>(128 * i);
    long long t = 0;
    if (mode == 2) {
      load(0, y);
      const long long until = clock64() + delay;
      while (clock64() < until) {
      }
      t = load(128, y);
    } else {
      t = load(0, y);
    }
    if (i >= kWarm) total += t;
  }
  out[0] = total / kIters;
}

long long run(const CUtensorMap& m, unsigned box_bytes, unsigned mode, unsigned delay, void* flush, size_t flush_bytes,
              long long* dout) {
  std::vector<double> v;
  for (int l = 0; l < 3; ++l) {
    if (mode != 0) CHECK(cudaMemset(flush, l + 2, flush_bytes));  // evict the L2 before cold rows
    k_box<<<1, 32, box_bytes + 2048>>>(m, box_bytes, mode, delay, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    long long h = 0;
    CHECK(cudaMemcpy(&h, dout, sizeof h, cudaMemcpyDeviceToHost));
    v.push_back(static_cast<double>(h));
  }
  return static_cast<long long>(median(v));
}

int main() {
  CHECK(cudaFuncSetAttribute(k_box, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768 + 2048));
  const unsigned long long cold_rows = 128ull * (kIters + kWarm), width = 32768;
  const size_t data_bytes = width * cold_rows, flush_bytes = 256ull << 20;  // 192 MiB, 256 MiB
  void *data, *flush;
  long long* dout;
  CHECK(cudaMalloc(&data, data_bytes));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&dout, sizeof(long long)));
  CHECK(cudaMemset(data, 1, data_bytes));
  std::printf("scenario,param,value\n");
  for (unsigned long long w : {128ull, 256ull, 1024ull, 8192ull, 32768ull})
    for (unsigned rows : {16u, 64u, 128u, 256u}) {
      const CUtensorMap m = make_strided_map(data, w, data_bytes / w, rows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
      std::printf("tma_hit_box_latency_w%llu,%u,%lld\n", w, rows, run(m, rows * 128, 0, 0, flush, flush_bytes, dout));
      std::fflush(stdout);
    }
  const CUtensorMap p128 = make_strided_map(data, width, cold_rows, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  const CUtensorMap p256 = make_strided_map(data, width, cold_rows, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  std::printf("tma_cold_box_latency_w32768_p128,128,%lld\n", run(p128, 16384, 1, 0, flush, flush_bytes, dout));
  std::printf("tma_cold_box_latency_w32768_p256,128,%lld\n", run(p256, 16384, 1, 0, flush, flush_bytes, dout));
  for (unsigned d : {0u, 4000u})
    std::printf("tma_promoted_box_latency_w32768,%u,%lld\n", d, run(p256, 16384, 2, d, flush, flush_bytes, dout));
  return 0;
}
