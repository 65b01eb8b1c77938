// Do SMs that read the same L2 lines at the same moment stay together? h100_shared_offsets.csv
// (h100_units2.cu --shared-offsets) gives one rate per STEP; this logs when each load of each CTA
// completes, so the spread of a group of SMs reading one box can be followed over the run.
//
// Every CTA (one per SM, grid = SM count) streams one L2-resident 4 MiB ring of 128 boxes of
// 32 KiB, 4 in flight, CTA c starting at box c x STEP. Optionally paced: load j is not issued
// before the launch's start + j x PACE ns (%globaltimer, common to all SMs), so every SM is held
// to one schedule and SMs reading one box stay aligned as long as the memory system keeps up.
//
// Prints (stdout) bytes per ns x100 (the header's nvidia-smi clock converts to cycles):
// tma_stream_shared_offset_bytes_per_ns_x100 (param STEP) and, paced,
// tma_stream_shared_paced_step<STEP>_bytes_per_ns_x100 (param PACE ns) and, paced in cycles,
// tma_stream_shared_paced<P>_step8_gpc_delta_bytes_per_ns_x100 (param DELTA cycles); writes the
// per-load log to $TRACE (cta,smid,step,pace,pace_cycles,delta_cycles,j,t_ns: t from the launch's
// first start, or from the pacing's start).
// With an argument STEP it runs one warm-up launch and one unpaced launch at STEP (for ncu:
// run_l2_merge_ncu.sh).
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_shared_drift.cu -lcuda
#include "calibration_ptx.cuh"

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <vector>

constexpr unsigned kBoxBytes = 32768, kBoxRows = 256, kRingBoxes = 128, kStages = 4, kLoads = 256;

// pace_ns: load j not before start + j x pace_ns (%globaltimer). pace_cycles (with pace_ns 0):
// every CTA waits for %globaltimer to reach `start` (all SMs see its tick together) and takes its
// own clock there, then issues load j not before that clock + j x pace_cycles + (c / 16) x
// delta_cycles: the CTAs of one STEP 8 group (c, c + 16, ...: one per GPC) a given number of
// cycles apart.
__global__ void k_stream_logged(const __grid_constant__ CUtensorMap map, unsigned step, unsigned long long start,
                                unsigned pace_ns, unsigned pace_cycles, unsigned delta_cycles,
                                unsigned long long* log, unsigned* smids, unsigned long long* span) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = init_stage_ring(smem, kStages, kBoxBytes);
  const unsigned bars = base + kStages * kBoxBytes;
  smids[blockIdx.x] = sm_id();
  const unsigned long long t0 = globaltimer();
  atomicMin(&span[0], t0);
  const unsigned first_box = blockIdx.x * step;
  long long c_start = 0;
  if (pace_cycles) {
    wait_globaltimer(start);
    c_start = clock64() + static_cast<long long>(blockIdx.x / 16) * delta_cycles;
  }
  for (unsigned i = 0; i < kLoads + kStages; ++i) {
    const unsigned s = i % kStages;
    if (i >= kStages) {
      mbar_wait(bars + 8 * s, ((i - kStages) / kStages) & 1);
      log[blockIdx.x * kLoads + i - kStages] = globaltimer();
    }
    if (i < kLoads) {
      if (pace_ns)
        while (globaltimer() < start + static_cast<unsigned long long>(i) * pace_ns) {
        }
      if (pace_cycles)
        while (clock64() < c_start + static_cast<long long>(i) * pace_cycles) {
        }
      mbar_arrive_expect_tx(bars + 8 * s, kBoxBytes);
      const int row = static_cast<int>(((first_box + i) % kRingBoxes) * kBoxRows);
      tma_load_2d(base + s * kBoxBytes, &map, 0, row, bars + 8 * s);
    }
  }
  atomicMax(&span[1], globaltimer());
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::FILE* trace = open_trace("cta,smid,step,pace,pace_cycles,delta_cycles,j,t_ns");
  std::printf("# device,%s,sms,%d\nscenario,param,cycles\n", prop.name, prop.multiProcessorCount);

  void* ring;
  CHECK(cudaMalloc(&ring, kRingBoxes * kBoxBytes));
  CHECK(cudaMemset(ring, 1, kRingBoxes * kBoxBytes));
  const CUtensorMap map = make_map(ring, kRingBoxes * kBoxRows, kBoxRows);
  unsigned long long *log, *span;
  unsigned* smids;
  CHECK(cudaMalloc(&log, sizeof(unsigned long long) * sms * kLoads));
  CHECK(cudaMalloc(&span, 2 * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&smids, sizeof(unsigned) * sms));
  const unsigned smem = kStages * kBoxBytes + 2048;
  CHECK(cudaFuncSetAttribute(k_stream_logged, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::vector<unsigned long long> h_log(sms * kLoads);
  std::vector<unsigned> h_smids(sms);

  struct Run {
    unsigned step, pace_ns, pace_cycles = 0, delta_cycles = 0;
  };
  const Run all_runs[] = {{0, 0},       {1, 0},         {2, 0},         {8, 0},         {16, 0},
                      {8, 0},  // again, warm
                      {8, 300},     {8, 450},       {8, 700},       {2, 300},       {2, 700},
                      {0, 300},     {8, 0, 900, 0}, {8, 0, 900, 8}, {8, 0, 900, 16}, {8, 0, 900, 32},
                      {8, 0, 900, 64}, {8, 0, 900, 128}, {8, 0, 900, 256}, {8, 0, 900, 512}, {8, 0, 900, 0},
                      {8, 0, 1400, 0}};
  // With an argument STEP: a warm-up launch, then one unpaced launch at STEP (for ncu).
  std::vector<Run> runs(std::begin(all_runs), std::end(all_runs));
  if (argc > 1) {
    const unsigned step = static_cast<unsigned>(std::atoi(argv[1]));
    runs = {{step, 0}, {step, 0}};
  }
  for (const Run& r : runs) {
    const unsigned long long init[2] = {~0ull, 0};
    CHECK(cudaMemcpy(span, init, sizeof(init), cudaMemcpyHostToDevice));
    const unsigned long long start = paced_launch_start();
    k_stream_logged<<<sms, 32, smem>>>(map, r.step, start, r.pace_ns, r.pace_cycles, r.delta_cycles, log, smids,
                                       span);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    unsigned long long h_span[2];
    CHECK(cudaMemcpy(h_span, span, sizeof(h_span), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_log.data(), log, sizeof(unsigned long long) * h_log.size(), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_smids.data(), smids, sizeof(unsigned) * sms, cudaMemcpyDeviceToHost));
    const unsigned long long t_begin = r.pace_ns || r.pace_cycles ? start : h_span[0];
    const double ns = static_cast<double>(h_span[1] - t_begin);
    const double bytes_per_ns = static_cast<double>(sms) * kLoads * kBoxBytes / ns;
    if (r.pace_cycles)
      std::printf("tma_stream_shared_paced%u_step%u_gpc_delta_bytes_per_ns_x100,%u,%lld\n", r.pace_cycles, r.step,
                  r.delta_cycles, static_cast<long long>(bytes_per_ns * 100));
    else if (r.pace_ns)
      std::printf("tma_stream_shared_paced_step%u_bytes_per_ns_x100,%u,%lld\n", r.step, r.pace_ns,
                  static_cast<long long>(bytes_per_ns * 100));
    else
      std::printf("tma_stream_shared_offset_bytes_per_ns_x100,%u,%lld\n", r.step,
                  static_cast<long long>(bytes_per_ns * 100));
    std::fflush(stdout);
    if (trace)
      for (unsigned c = 0; c < sms; ++c)
        for (unsigned j = 0; j < kLoads; ++j)
          std::fprintf(trace, "%u,%u,%u,%u,%u,%u,%u,%lld\n", c, h_smids[c], r.step, r.pace_ns, r.pace_cycles,
                       r.delta_cycles, j,
                       static_cast<long long>(h_log[c * kLoads + j] - t_begin));
  }
  if (trace) std::fclose(trace);
  return 0;
}
