// How evenly do an SM's TMA boxes come back when every SM streams at once? The rate rows
// (h100_units2.cu's tma_stream_all_sms_*) give each stream's mean; this gives the spread around
// it, per box: when the L2 (or HBM) is the bottleneck, does every box of a stream wait about the
// same, or do some come back at once and others late?
//
// Every CTA (one per SM, or one CTA alone) keeps STAGES boxes of 16 KiB in flight through one
// thread, as the persistent GEMM's producer does, for kLoads loads: MODE l2 cycles through 8 boxes
// of its own (128 KiB, read by a warm-up launch first, so every load hits); MODE hbm reads data no
// load read before (the L2 flushed by a 256 MiB memset first). The thread takes clock64 before
// each load and after the wait that sees it land (it is waiting then: with STAGES in flight it
// waits for the oldest), so per box: its latency (issue -> landed) and the interval since the
// previous box of its stream landed.
//
// Prints scenario,param,value rows (param: STAGES); the spread figures pool loads kSkip..kLoads-1
// of every CTA:
//   box_spread_<mode>_<all|one>_interval_cv_x1000   the intervals' standard deviation / mean x 1000
//   box_spread_<mode>_<all|one>_interval_p{10,50,90} cycles
//   box_spread_<mode>_<all|one>_latency_p{10,50,90}  cycles
//   box_spread_<mode>_<all|one>_bytes_per_cycle_x100 all CTAs' bytes over the slowest CTA's span
//                                                    (its first issue to its last landing, clock64)
// and, with $TRACE, every load: mode,ctas,stages,cta,smid,j,issue,landed (clock64 cycles from the
// CTA's first issue). The model's twin: bwsim's box_spread_* ubench scenarios
// (src/kernels/UbenchBoxSpread.cpp), the same figures with the same definitions, compared by
// `bwsim compare h200_box_spread.csv` (CalibrationTest.BoxLandingsOfAllSmStreamsOnTheH200).
// Build (as run_program.sh does): nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a
// h100_box_spread.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

constexpr unsigned kBoxBytes = 16384, kBoxRows = 128, kLoads = 512, kSkip = 64, kHotBoxes = 8;

// One thread per CTA; region_boxes 0: every load new data (CTA c's loads at rows c * kLoads * kBoxRows on).
__global__ void k_box_spread(const __grid_constant__ CUtensorMap map, unsigned stages, unsigned region_boxes,
                             long long* issue, long long* landed, unsigned* smids, unsigned long long* span) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  smids[blockIdx.x] = sm_id();
  atomicMin(&span[0], globaltimer());
  const unsigned base = init_stage_ring(smem, stages, kBoxBytes);
  const unsigned bars = base + stages * kBoxBytes;
  // region_boxes is 0 or a power of two; the stage and its parity are counted, not divided out
  // (a run-time division per load bounds the loop near 280 cycles per box: README, "The producer
  // loop's own cost").
  const unsigned mask = region_boxes ? region_boxes - 1 : ~0u;
  const unsigned first = blockIdx.x * (region_boxes ? region_boxes : kLoads);
  long long* my_issue = issue + static_cast<size_t>(blockIdx.x) * kLoads;
  long long* my_landed = landed + static_cast<size_t>(blockIdx.x) * kLoads;
  unsigned s = 0, parity = 0;
  for (unsigned i = 0; i < kLoads + stages; ++i) {
    if (i >= stages) {
      mbar_wait(bars + 8 * s, parity);
      my_landed[i - stages] = clock64();
    }
    if (i < kLoads) {
      mbar_arrive_expect_tx(bars + 8 * s, kBoxBytes);
      my_issue[i] = clock64();
      tma_load_2d(base + s * kBoxBytes, &map, 0, static_cast<int>((first + (i & mask)) * kBoxRows), bars + 8 * s);
    }
    if (++s == stages) {
      s = 0;
      if (i >= stages) parity ^= 1u;
    }
  }
  atomicMax(&span[1], globaltimer());
}

namespace {
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}
}  // namespace

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::FILE* trace = open_trace("mode,ctas,stages,cta,smid,j,issue,landed");
  std::printf("# device,%s,sms,%u\nscenario,param,value\n", prop.name, sms);

  const size_t rows = static_cast<size_t>(sms) * kLoads * kBoxRows;  // enough for the hbm mode
  void* data;
  CHECK(cudaMalloc(&data, rows * 128));
  CHECK(cudaMemset(data, 1, rows * 128));
  void* flush;
  CHECK(cudaMalloc(&flush, 256u << 20));
  const CUtensorMap map = make_map(data, static_cast<unsigned>(rows), kBoxRows);
  long long *issue, *landed;
  unsigned* smids;
  unsigned long long* span;
  CHECK(cudaMalloc(&issue, sizeof(long long) * sms * kLoads));
  CHECK(cudaMalloc(&landed, sizeof(long long) * sms * kLoads));
  CHECK(cudaMalloc(&smids, sizeof(unsigned) * sms));
  CHECK(cudaMalloc(&span, 2 * sizeof(unsigned long long)));
  const unsigned max_smem = 8 * kBoxBytes + 2048;
  CHECK(cudaFuncSetAttribute(k_box_spread, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  std::vector<long long> h_issue(sms * kLoads), h_landed(sms * kLoads);
  std::vector<unsigned> h_smids(sms);

  struct Run {
    const char* mode;
    bool all;
    unsigned stages;
  };
  const Run runs[] = {{"l2", true, 2},  {"l2", true, 4},  {"l2", true, 6},   {"l2", false, 4},
                      {"hbm", true, 4}, {"hbm", true, 6}, {"hbm", false, 4}};
  for (const Run& r : runs) {
    const bool hot = std::string(r.mode) == "l2";
    const unsigned ctas = r.all ? sms : 1;
    const unsigned smem = r.stages * kBoxBytes + 2048;
    const unsigned long long init[2] = {~0ull, 0};
    if (hot) {  // warm-up launch: every CTA's 8 boxes into the L2
      k_box_spread<<<ctas, 32, smem>>>(map, r.stages, kHotBoxes, issue, landed, smids, span);
      CHECK(cudaGetLastError());
    } else {
      CHECK(cudaMemset(flush, 2, 256u << 20));
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(span, init, sizeof(init), cudaMemcpyHostToDevice));
    k_box_spread<<<ctas, 32, smem>>>(map, r.stages, hot ? kHotBoxes : 0, issue, landed, smids, span);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    unsigned long long h_span[2];
    CHECK(cudaMemcpy(h_span, span, sizeof(h_span), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_issue.data(), issue, sizeof(long long) * ctas * kLoads, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_landed.data(), landed, sizeof(long long) * ctas * kLoads, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_smids.data(), smids, sizeof(unsigned) * ctas, cudaMemcpyDeviceToHost));
    std::vector<double> intervals, latencies;
    long long cycles = 0;  // the slowest CTA's first issue -> last landing, in its SM's cycles
    for (unsigned c = 0; c < ctas; ++c) {
      const long long* is = &h_issue[c * kLoads];
      const long long* la = &h_landed[c * kLoads];
      cycles = std::max(cycles, la[kLoads - 1] - is[0]);
      for (unsigned j = kSkip; j < kLoads; ++j) {
        intervals.push_back(static_cast<double>(la[j] - la[j - 1]));
        latencies.push_back(static_cast<double>(la[j] - is[j]));
      }
      if (trace)
        for (unsigned j = 0; j < kLoads; ++j)
          std::fprintf(trace, "%s,%u,%u,%u,%u,%u,%lld,%lld\n", r.mode, ctas, r.stages, c, h_smids[c], j, is[j] - is[0],
                       la[j] - is[0]);
    }
    double mean = 0, var = 0;
    for (double x : intervals) mean += x;
    mean /= static_cast<double>(intervals.size());
    for (double x : intervals) var += (x - mean) * (x - mean);
    const double cv = std::sqrt(var / static_cast<double>(intervals.size())) / mean;
    const std::string name = std::string("box_spread_") + r.mode + (r.all ? "_all" : "_one");
    auto row = [&](const char* what, double v) {
      std::printf("%s_%s,%u,%lld\n", name.c_str(), what, r.stages, static_cast<long long>(std::llround(v)));
    };
    row("interval_cv_x1000", cv * 1000);
    row("interval_p10", quantile(intervals, 0.1));
    row("interval_p50", quantile(intervals, 0.5));
    row("interval_p90", quantile(intervals, 0.9));
    row("latency_p10", quantile(latencies, 0.1));
    row("latency_p50", quantile(latencies, 0.5));
    row("latency_p90", quantile(latencies, 0.9));
    row("bytes_per_cycle_x100", 100.0 * ctas * kLoads * kBoxBytes / static_cast<double>(cycles));
    std::printf("# %s stages %u: %.0f ns (globaltimer span)\n", name.c_str(), r.stages,
                static_cast<double>(h_span[1] - h_span[0]));
    std::fflush(stdout);
  }
  if (trace) std::fclose(trace);
  return 0;
}
