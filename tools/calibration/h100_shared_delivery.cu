// h100_shared_delivery: when many SMs ask for the same box at once, do they all get it at once?
// gemm_sm90_twin.cu's --kb-log showed the 64 CTAs that share a B tile of the ping-pong 8192^3 GEMM
// receiving the same k-block's stage up to ~1000 cycles apart from the first k-block on, a spread
// that grows over the tile, where the simulator (which hands every request waiting on a line in
// flight its data when the fill completes) keeps them in lockstep. This program isolates it.
//
// Kernel k_rounds: 132 CTAs of 32 threads, 133120 B of dynamic SMEM each (one per SM; the host checks
// the %smid values differ). Thread 0: init one mbarrier; a grid-wide start (atomicAdd on a counter,
// then spin until it reaches the grid size); then `rounds` dependent loads: round r loads box
// (r + first) of the map (shared: every CTA the same box; private: CTA c its own box), waits for it,
// and records %globaltimer after issue and after completion. The start spin releases the CTAs
// within a few hundred ns; every round after the first starts when the SM's previous box arrived.
// Map: calibration_ptx.cuh's make_map (uint8, 128-byte rows, box 128 rows = 16 KiB, 128B swizzle).
// Scenarios (each 3 launches; rows from the last):
// - shared_cold: the L2 flushed (cudaMemset of 256 MiB) before the launch; all CTAs the same boxes.
// - shared_hot: the same boxes read by one launch before (resident).
// - private_hot: CTA c its own boxes (resident).
// Output CSV: scenario,launch,smid,round,issue_ns,done_ns (ns from the launch's earliest issue),
// then per scenario a comment with the median over rounds of the completion spread (latest - earliest
// done, ns) and the clock.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_shared_delivery.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <string>
#include <vector>

constexpr unsigned kBox = 16384, kSmem = 133120, kCtas = 132, kRounds = 16;
constexpr size_t kFlushBytes = 256ull << 20;

__global__ void k_rounds(const __grid_constant__ CUtensorMap map, unsigned shared, unsigned* counter,
                         long long* out /* [cta][1 + 2 * rounds] */) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bar = base + kBox;
  mbar_init(bar, 1);
  fence_mbar_init();
  long long* o = out + blockIdx.x * (1 + 2 * kRounds);
  o[0] = sm_id();
  atomicAdd(counter, 1u);
  while (atomicAdd(counter, 0u) < gridDim.x) {
  }
  for (unsigned r = 0; r < kRounds; ++r) {
    const unsigned box = shared ? r : blockIdx.x * kRounds + r;
    mbar_arrive_expect_tx(bar, kBox);
    tma_load_2d(base, &map, 0, static_cast<int>(box * 128), bar);
    o[1 + 2 * r] = static_cast<long long>(globaltimer());
    mbar_wait(bar, r & 1u);
    o[2 + 2 * r] = static_cast<long long>(globaltimer());
  }
}

int main() {
  void *data, *flush;
  unsigned* counter;
  long long* dout;
  const size_t boxes = static_cast<size_t>(kCtas) * kRounds;
  CHECK(cudaMalloc(&data, boxes * kBox));
  CHECK(cudaMalloc(&flush, kFlushBytes));
  CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  CHECK(cudaMalloc(&dout, sizeof(long long) * kCtas * (1 + 2 * kRounds)));
  CHECK(cudaMemset(data, 5, boxes * kBox));
  CHECK(cudaFuncSetAttribute(k_rounds, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const CUtensorMap map = make_map(data, static_cast<unsigned>(boxes * 128), 128);
  std::vector<long long> h(kCtas * (1 + 2 * kRounds));
  std::printf("scenario,launch,smid,round,issue_ns,done_ns\n");
  struct Scenario {
    const char* name;
    unsigned shared;
    bool cold;
  };
  for (const Scenario s : {Scenario{"shared_cold", 1, true}, Scenario{"shared_hot", 1, false},
                           Scenario{"private_hot", 0, false}}) {
    std::vector<double> spreads;
    for (int launch = 0; launch < 3; ++launch) {
      if (s.cold) CHECK(cudaMemset(flush, launch, kFlushBytes));
      CHECK(cudaMemset(counter, 0, sizeof(unsigned)));
      k_rounds<<<kCtas, 32, kSmem>>>(map, s.shared, counter, dout);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(h.data(), dout, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      std::vector<long long> smids;
      long long t0 = -1;
      for (unsigned c = 0; c < kCtas; ++c) {
        const long long* o = &h[c * (1 + 2 * kRounds)];
        smids.push_back(o[0]);
        if (t0 < 0 || o[1] < t0) t0 = o[1];
      }
      std::sort(smids.begin(), smids.end());
      if (std::adjacent_find(smids.begin(), smids.end()) != smids.end()) {
        std::fprintf(stderr, "two CTAs on one SM\n");
        return 1;
      }
      for (unsigned r = 0; r < kRounds; ++r) {
        long long lo = -1, hi = 0;
        for (unsigned c = 0; c < kCtas; ++c) {
          const long long* o = &h[c * (1 + 2 * kRounds)];
          if (launch == 2)
            std::printf("%s,%d,%lld,%u,%lld,%lld\n", s.name, launch, o[0], r, o[1 + 2 * r] - t0, o[2 + 2 * r] - t0);
          lo = lo < 0 ? o[2 + 2 * r] : std::min(lo, o[2 + 2 * r]);
          hi = std::max(hi, o[2 + 2 * r]);
        }
        if (launch == 2) spreads.push_back(static_cast<double>(hi - lo));
      }
    }
    std::printf("# %s: completion spread over SMs, median over rounds %.0f ns\n", s.name, median(spreads));
    std::fflush(stdout);
  }
  CHECK(cudaFree(data));
  CHECK(cudaFree(flush));
  CHECK(cudaFree(counter));
  CHECK(cudaFree(dout));
  return 0;
}
