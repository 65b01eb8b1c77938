// h100_stride_mix: does the row stride of an SM's boxes, and so how many of a box's lines share one
// L2 slice, set its pace under load? h100_l2_slices.cu measured that a box of 128 rows puts about
// 6-7 lines on its busiest slice at a 16 KiB row stride, 5.4 at 1 KiB and 9.3 at 64 KiB (a random
// hash: 5.0). If the slices serve each requester its share (per-requester arbitration), an SM whose
// boxes concentrate on fewer slices needs more turns at its busiest ones and falls behind when
// every SM streams, though not alone; if they serve in arrival order, the stride does not matter.
//
// Every CTA (132, one per SM, 32 threads, 133120 B of SMEM) streams its own 8 hot boxes of 128 rows
// x 128 bytes (16 KiB; 16.5 MiB in all, L2-resident after a warm-up) through 4 stages, 1024 loads,
// with tma_stream_loop. CTA c's boxes come from map `even` or `odd` by c's parity; each map has
// rows `width` bytes apart (make_strided_map, uint8, SWIZZLE_128B, L2 promotion 128B).
// Scenarios (each: a warm-up launch, then 3 timed launches; per SM the median of its 3 values):
//   w<W>          every CTA at row stride W (W = 128, 1024, 16384, 65536)
//   mix_<A>_<B>   even CTAs at A, odd CTAs at B: 128 / 1024 (one page per CTA either way; 8.9
//                 against 5.4 lines on the busiest slice) and the reverse, 1024 / 65536 and the
//                 reverse, 16384 / 65536
//   alone_w<W>    SMs 0..15 one at a time, each alone on the chip (W = 1024, 65536)
// Output CSV: scenario,smid,cta_parity,width,cycles_per_box; then per scenario a comment with the
// clock (MHz, median over CTAs of clock64 / %globaltimer) and, per width, the SMs' median cycles
// per box with the min and max.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_stride_mix.cu -lcuda
#include "calibration_ptx.cuh"

#include <map>
#include <string>
#include <vector>

constexpr unsigned kBox = 16384, kSmem = 133120, kCtas = 132, kBoxes = 8, kStages = 4, kLoads = 1024;
constexpr unsigned kRows = kCtas * kBoxes * 128;

__global__ void k_mix(const __grid_constant__ CUtensorMap even, const __grid_constant__ CUtensorMap odd,
                      unsigned loads, unsigned only, CtaTiming* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned smid = sm_id();
  out[blockIdx.x] = CtaTiming{0, 0, 0, 0, smid};
  if (only < kCtas && smid != only) return;
  const unsigned base = init_stage_ring(smem, kStages, kBox), bars = base + kStages * kBox;
  const CUtensorMap* map = blockIdx.x % 2 ? &odd : &even;
  const unsigned long long ns0 = globaltimer();
  const long long c0 = clock64();
  tma_stream_loop(map, base, bars, kBox, 128, blockIdx.x * kBoxes * 128, kBoxes * 128, kStages, loads);
  const unsigned long long ns1 = globaltimer();
  out[blockIdx.x] = CtaTiming{static_cast<long long>(ns0), static_cast<long long>(ns1), c0, clock64(), smid};
}

int main() {
  const std::vector<unsigned long long> widths = {128, 1024, 16384, 65536};
  std::map<unsigned long long, CUtensorMap> maps;
  std::vector<void*> buffers;
  for (const unsigned long long w : widths) {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, w * kRows));  // 64 KiB rows: 8.9 GB, of which 16.5 MiB are read
    CHECK(cudaMemset(p, 1, w * kRows));
    buffers.push_back(p);
    maps[w] = make_strided_map(p, w, kRows, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  }
  CtaTiming* dout;
  CHECK(cudaMalloc(&dout, sizeof(CtaTiming) * kCtas));
  CHECK(cudaFuncSetAttribute(k_mix, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));

  struct Sample {
    unsigned parity;
    unsigned long long width;
    std::vector<double> cycles;
  };
  // One launch (only: the SM allowed to run, kCtas for all); adds each SM's cycles per box.
  auto launch = [&](unsigned long long we, unsigned long long wo, unsigned only, std::map<long long, Sample>& per_sm,
                    std::vector<double>& clocks) {
    k_mix<<<kCtas, 32, kSmem>>>(maps.at(we), maps.at(wo), kLoads, only, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const std::vector<CtaTiming> t = read_cta_timings(dout, kCtas);
    for (unsigned c = 0; c < kCtas; ++c) {
      if (t[c].c1 == 0) continue;
      Sample& s = per_sm[t[c].smid];
      s.parity = c % 2;
      s.width = c % 2 ? wo : we;
      s.cycles.push_back(t[c].cycles() / kLoads);
      clocks.push_back(t[c].mhz());
    }
  };
  auto report = [&](const std::string& name, std::map<long long, Sample>& per_sm, std::vector<double>& clocks) {
    std::map<unsigned long long, std::vector<double>> by_width;
    for (auto& [sm, s] : per_sm) {
      const double m = median(s.cycles);
      by_width[s.width].push_back(m);
      std::printf("%s,%lld,%u,%llu,%.1f\n", name.c_str(), sm, s.parity, s.width, m);
    }
    std::printf("# %s: clock_mhz %.0f", name.c_str(), median(clocks));
    for (auto& [w, v] : by_width) {
      const double med = median(v);  // sorts v
      std::printf("; width %llu: %zu SMs, cycles per box median %.1f min %.1f max %.1f", w, v.size(), med, v.front(),
                  v.back());
    }
    std::printf("\n");
    std::fflush(stdout);
  };
  std::printf("scenario,smid,cta_parity,width,cycles_per_box\n");
  const std::vector<std::pair<unsigned long long, unsigned long long>> loaded = {
      {128, 128},  {1024, 1024},  {16384, 16384}, {65536, 65536}, {128, 1024},
      {1024, 128}, {1024, 65536}, {65536, 1024},  {16384, 65536}};
  for (const auto& [we, wo] : loaded) {
    const std::string name = we == wo ? "w" + std::to_string(we) : "mix_" + std::to_string(we) + "_" + std::to_string(wo);
    std::map<long long, Sample> warm, per_sm;
    std::vector<double> clocks, warm_clocks;
    launch(we, wo, kCtas, warm, warm_clocks);
    for (int r = 0; r < 3; ++r) launch(we, wo, kCtas, per_sm, clocks);
    report(name, per_sm, clocks);
  }
  for (const unsigned long long w : {1024ull, 65536ull}) {
    std::map<long long, Sample> warm, per_sm;
    std::vector<double> clocks, warm_clocks;
    launch(w, w, kCtas, warm, warm_clocks);  // every SM's boxes resident
    for (int r = 0; r < 3; ++r)
      for (unsigned sm = 0; sm < 16; ++sm) launch(w, w, sm, per_sm, clocks);
    report("alone_w" + std::to_string(w), per_sm, clocks);
  }
  for (void* p : buffers) CHECK(cudaFree(p));
  CHECK(cudaFree(dout));
  return 0;
}
