// h100_wake: when does a thread that waits on an mbarrier that a TMA load completes get going
// again, against another warp waiting on the same phase? h100_stage_parts.cu's trace
// (h200_stage_parts_trace.csv.gz) has its issuing thread's next load 208 cycles after an observer
// warp's clock64 at the same completion whenever the issuer was blocked in its wait, and 45 cycles
// after its MMA clock's deadline when it was spinning on that instead. This separates the cases.
//
// One CTA per SM (G CTAs, 96 threads, one lane of each warp working); each CTA issues 64 loads of
// a 16 KiB box (128 of its own rows, 128 bytes of each, rows 32 KiB apart: the GEMM operand's
// shape), one at a time:
// load j is issued once the issuer has seen load j - 1 complete. MODE says who waits how:
//   both     the issuer (warp 0) and an observer (warp 1) wait on the load's mbarrier (try_wait);
//   swapped  the same with warp 1 issuing and warp 0 observing;
//   spin     the issuer spins on test_wait, the observer uses try_wait;
//   relay    only the observer waits on the load's mbarrier; it then arrives on a second mbarrier
//            that the issuer waits on (a GEMM's consumer releasing a stage to its producer);
//   alone    the issuer waits, no observer.
// hot: the CTA cycles over 8 boxes a warm-up launch left in the L2; cold: 64 boxes not read since
// the L2 was flushed (256 MiB memset) before the launch. An observer is at most one phase behind
// its issuer (the issuer's next load lands 500+ cycles after its own return), so the parity wait
// cannot alias.
// Prints CSV rows wake_<mode>_<hot|cold>_<what>,G,value with what = issuer_cycles (issue to the
// issuer's return), observer_cycles (issue to the observer's return), gap (issuer's return minus
// the observer's) and per_load (issue to next issue): medians over loads 4..63 and the CTAs.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_wake.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

constexpr unsigned kLoads = 64, kBoxBytes = 16384, kRows = 128, kHotBoxes = 8;
constexpr unsigned long long kWidth = 32768;
enum Mode : unsigned { kBoth, kSwapped, kSpin, kRelay, kAlone };
const char* kModeNames[] = {"both", "swapped", "spin", "relay", "alone"};

struct Log {
  long long issue[kLoads], issuer[kLoads], observer[kLoads];
};

__global__ void k_wake(const __grid_constant__ CUtensorMap map, unsigned mode, bool cold, Log* out) {
  extern __shared__ unsigned char smem[];
  const unsigned box = (smem_addr(smem) + 1023) & ~1023u, full = box + kBoxBytes, ack = full + 8;
  const unsigned warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    mbar_init(full, 1);
    mbar_init(ack, 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x % 32 != 0) return;
  Log* log = out + blockIdx.x;
  const unsigned issuer = mode == kSwapped ? 1 : 0, observer = 1 - issuer;
  if (warp == issuer) {
    for (unsigned j = 0; j < kLoads; ++j) {
      // The CTA's own 128 rows; load j reads their 128-byte column 2j (hot: 2 (j % 8)), every other
      // column so that no load's lines came in as another's 256B promotion.
      const unsigned column = 2 * (cold ? j : j % kHotBoxes);
      log->issue[j] = clock64();
      mbar_arrive_expect_tx(full, kBoxBytes);
      tma_load_2d(box, &map, static_cast<int>(128 * column), static_cast<int>(blockIdx.x * kRows), full);
      if (mode == kSpin) {
        while (!mbar_test_wait(full, j & 1)) {
        }
      } else {
        mbar_wait(mode == kRelay ? ack : full, j & 1);
      }
      log->issuer[j] = clock64();
    }
  } else if (warp == observer && mode != kAlone) {
    for (unsigned j = 0; j < kLoads; ++j) {
      mbar_wait(full, j & 1);
      log->observer[j] = clock64();
      if (mode == kRelay) mbar_arrive(ack);
    }
  }
}

int main() {
  CHECK(cudaFuncSetAttribute(k_wake, cudaFuncAttributeMaxDynamicSharedMemorySize, 116 * 1024));
  const unsigned long long rows = 132ull * kRows;  // 128 rows 32 KiB apart per CTA: 528 MiB
  void* data;
  CHECK(cudaMalloc(&data, kWidth * rows));
  CHECK(cudaMemset(data, 1, kWidth * rows));
  void* flush;
  CHECK(cudaMalloc(&flush, 256ull << 20));
  const CUtensorMap map = make_strided_map(data, kWidth, rows, kRows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  Log* dout;
  CHECK(cudaMalloc(&dout, sizeof(Log) * 132));
  std::printf("scenario,param,value\n");
  for (unsigned mode = kBoth; mode <= kAlone; ++mode)
    for (bool cold : {false, true})
      for (unsigned g : {1u, 16u, 132u}) {
        // 116 KiB of dynamic SMEM keeps the CTAs one per SM.
        if (cold) CHECK(cudaMemset(flush, 0, 256ull << 20));
        else k_wake<<<g, 96, 116 * 1024>>>(map, mode, cold, dout);  // warm-up: the hot boxes into the L2
        CHECK(cudaMemset(dout, 0, sizeof(Log) * 132));
        k_wake<<<g, 96, 116 * 1024>>>(map, mode, cold, dout);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        std::vector<Log> h(g);
        CHECK(cudaMemcpy(h.data(), dout, sizeof(Log) * g, cudaMemcpyDeviceToHost));
        std::vector<double> by_issuer, by_observer, gap, per_load;
        for (const Log& l : h)
          for (unsigned j = 4; j < kLoads; ++j) {
            by_issuer.push_back(static_cast<double>(l.issuer[j] - l.issue[j]));
            if (l.observer[j]) {
              by_observer.push_back(static_cast<double>(l.observer[j] - l.issue[j]));
              gap.push_back(static_cast<double>(l.issuer[j] - l.observer[j]));
            }
            if (j + 1 < kLoads) per_load.push_back(static_cast<double>(l.issue[j + 1] - l.issue[j]));
          }
        const char* temp = cold ? "cold" : "hot";
        std::printf("wake_%s_%s_issuer_cycles,%u,%.0f\n", kModeNames[mode], temp, g, median(by_issuer));
        if (!by_observer.empty()) {
          std::printf("wake_%s_%s_observer_cycles,%u,%.0f\n", kModeNames[mode], temp, g, median(by_observer));
          std::printf("wake_%s_%s_gap,%u,%.0f\n", kModeNames[mode], temp, g, median(gap));
        }
        std::printf("wake_%s_%s_per_load,%u,%.0f\n", kModeNames[mode], temp, g, median(per_load));
        std::fflush(stdout);
      }
  return 0;
}
