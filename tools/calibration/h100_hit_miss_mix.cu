// Does a read miss cost the L2 what a hit does (one request), or more (its fill written into the
// data banks)? Every SM streams 32 KiB boxes with 192 KiB in flight (deep enough that latency does
// not bind), a fraction of them misses: of every PERIOD loads, MISSES come from the SM's own cold
// region (read once in the run: HBM) and the rest from its own 128 KiB hot region (L2 hits).
// If a miss is one request like a hit, the stream runs at the L2's request ceiling (the all-hit
// rate) until HBM binds; if its fill costs the arrays extra, it runs slower by that cost.
//
// Prints CSV rows tma_stream_mix_<MISSES>of<PERIOD>_bytes_per_ns_x100,196608,<value> (aggregate
// bytes per ns x 100, first CTA start to last CTA end, the best of two launches after a warm-up).
// With an argument I it runs only variant I (a warm-up launch and one timed; for ncu).
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_hit_miss_mix.cu -lcuda
#include "calibration_ptx.cuh"

#include <cstdio>
#include <cstdlib>

constexpr unsigned kBoxBytes = 32768, kBoxRows = 256, kStages = 6, kLoads = 384, kHotBoxes = 4;

__global__ void k_mix(const __grid_constant__ CUtensorMap map, unsigned misses, unsigned period, unsigned cold_first_row,
                      unsigned cold_boxes_per_sm, unsigned launch, unsigned long long* span) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = init_stage_ring(smem, kStages, kBoxBytes);
  const unsigned bars = base + kStages * kBoxBytes;
  atomicMin(&span[0], globaltimer());
  const unsigned c = blockIdx.x;
  unsigned hot = 0, cold = (launch * kLoads) % cold_boxes_per_sm;  // each launch its own cold boxes
  tma_staged_loop(&map, base, bars, kBoxBytes, kStages, kLoads, [&](unsigned i) {
    unsigned row;
    if (i % period < misses) {
      row = cold_first_row + (c * cold_boxes_per_sm + cold) * kBoxRows;
      cold = (cold + 1) % cold_boxes_per_sm;
    } else {
      row = (c * kHotBoxes + hot) * kBoxRows;
      hot = (hot + 1) % kHotBoxes;
    }
    return make_int2(0, static_cast<int>(row));
  });
  atomicMax(&span[1], globaltimer());
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("# device,%s,sms,%d\nscenario,param,cycles\n", prop.name, prop.multiProcessorCount);
  const unsigned cold_boxes_per_sm = 4 * kLoads;  // 48 MiB per SM: 4 launches of all-miss loads
  const unsigned cold_first_row = sms * kHotBoxes * kBoxRows;
  const unsigned rows = cold_first_row + sms * cold_boxes_per_sm * kBoxRows;
  void* buf;
  CHECK(cudaMalloc(&buf, static_cast<size_t>(rows) * 128));
  CHECK(cudaMemset(buf, 1, static_cast<size_t>(rows) * 128));
  const CUtensorMap map = make_map(buf, rows, kBoxRows);
  unsigned long long* span;
  CHECK(cudaMalloc(&span, 2 * sizeof(unsigned long long)));
  const unsigned smem = kStages * kBoxBytes + 2048;
  CHECK(cudaFuncSetAttribute(k_mix, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  struct Mix {
    unsigned misses, period;
  };
  const Mix mixes[] = {{0, 1}, {1, 8}, {1, 4}, {1, 3}, {1, 2}, {1, 1}};
  const int only = argc > 1 ? std::atoi(argv[1]) : -1;
  unsigned launch = 0;
  for (int v = 0; v < static_cast<int>(sizeof(mixes) / sizeof(mixes[0])); ++v) {
    if (only >= 0 && v != only) continue;
    const Mix& m = mixes[v];
    double best = 0;
    for (int rep = 0; rep < (only >= 0 ? 2 : 3); ++rep) {  // the first warms the hot regions
      const unsigned long long init[2] = {~0ull, 0};
      CHECK(cudaMemcpy(span, init, sizeof(init), cudaMemcpyHostToDevice));
      k_mix<<<sms, 32, smem>>>(map, m.misses, m.period, cold_first_row, cold_boxes_per_sm, launch++, span);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      unsigned long long h[2];
      CHECK(cudaMemcpy(h, span, sizeof(h), cudaMemcpyDeviceToHost));
      const double rate = static_cast<double>(sms) * kLoads * kBoxBytes / static_cast<double>(h[1] - h[0]);
      if (rep > 0 && rate > best) best = rate;
    }
    std::printf("tma_stream_mix_%uof%u_bytes_per_ns_x100,%u,%lld\n", m.misses, m.period, kStages * kBoxBytes,
                static_cast<long long>(best * 100));
    std::fflush(stdout);
  }
  return 0;
}
