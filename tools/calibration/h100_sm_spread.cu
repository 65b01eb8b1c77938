// h100_sm_spread: does every SM get the same service from the memory system? All 132 SMs run the
// same TMA stream at once (one CTA per SM) and each reports its own cycles per box with its %smid;
// and each SM alone times dependent hot boxes. gemm_sm90_twin.cu's --tile-log showed the ping-pong
// 128x128 GEMMs' CTAs advancing at per-SM rates that differ by up to 20% (the same 24 SMs fast in
// every run and shape) where the cooperative ones stay within 0.4%: this program asks whether the
// memory side alone shows that spread, and under which load.
//
// Tensor map: calibration_ptx.cuh's make_map (uint8, 128-byte rows, box 128 rows = 16 KiB,
// SWIZZLE_128B, L2 promotion 128B). Loads by tma_stream_loop (calibration_ptx.cuh) through S
// stages of 16 KiB. Kernel k_stream: 132 CTAs of 32 threads, 133120 B of dynamic SMEM each (one per
// SM; the host checks the %smid values differ); thread 0 streams `loads` boxes of its region and
// records CtaTiming (calibration_ptx.cuh). With `only` < 132, every CTA but the one on SM `only`
// returns at once.
//
// Scenarios (each: a warm-up launch, then 3 timed launches; per SM the median of its 3 values):
// - private_l2_s<S> (S = 1, 2, 4): CTA c reads its own 8 boxes (128 KiB; 16.5 MiB in all, resident
//   after the warm-up) cyclically, 1024 loads.
// - shared_l2_s4: every CTA reads the same 16 boxes (256 KiB), CTA c starting at box c % 16, 1024
//   loads.
// - private_hbm_s2: CTA c reads its own 4 MiB front to back (256 loads) after a flush of the L2
//   (cudaMemset of 256 MiB) before each launch.
// - alone_l2_s1: for each SM in turn, that SM alone reads its 8 boxes, 256 dependent loads.
// Output CSV: scenario,smid,cycles_per_box (clock64 delta / loads), then a comment per scenario
// with the clock (MHz, median over CTAs of clock64 / %globaltimer) and the spread (min, median,
// max over SMs).
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_sm_spread.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

constexpr unsigned kBox = 16384, kSmem = 133120, kCtas = 132, kPrivateBoxes = 8, kSharedBoxes = 16;
constexpr unsigned kHbmBoxes = 256;  // 4 MiB per CTA
constexpr size_t kFlushBytes = 256ull << 20;

__global__ void k_stream(const __grid_constant__ CUtensorMap map, unsigned first_box_of_cta, unsigned region_boxes,
                         unsigned stagger, unsigned stages, unsigned loads, unsigned only, CtaTiming* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned smid = sm_id();
  out[blockIdx.x] = CtaTiming{0, 0, 0, 0, smid};
  if (only < kCtas && smid != only) return;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bars = base + 4 * kBox;
  for (unsigned s = 0; s < stages; ++s) mbar_init(bars + 8 * s, 1);
  fence_mbar_init();
  const unsigned first_row = blockIdx.x * first_box_of_cta * 128;
  const unsigned long long ns0 = globaltimer();
  const long long c0 = clock64();
  tma_stream_loop(&map, base, bars, kBox, 128, first_row, region_boxes * 128, stages, loads,
                  (blockIdx.x * stagger) % region_boxes);
  const unsigned long long ns1 = globaltimer();
  out[blockIdx.x] = CtaTiming{static_cast<long long>(ns0), static_cast<long long>(ns1), c0, clock64(), smid};
}

struct Scenario {
  std::string name;
  const CUtensorMap* map;
  unsigned first_box_of_cta, region_boxes, stagger, stages, loads;
  bool flush;
};

int main() {
  void *priv, *shared, *hbm, *flush;
  CHECK(cudaMalloc(&priv, static_cast<size_t>(kCtas) * kPrivateBoxes * kBox));
  CHECK(cudaMalloc(&shared, static_cast<size_t>(kSharedBoxes) * kBox));
  CHECK(cudaMalloc(&hbm, static_cast<size_t>(kCtas) * kHbmBoxes * kBox));
  CHECK(cudaMalloc(&flush, kFlushBytes));
  CHECK(cudaMemset(priv, 1, static_cast<size_t>(kCtas) * kPrivateBoxes * kBox));
  CHECK(cudaMemset(shared, 2, static_cast<size_t>(kSharedBoxes) * kBox));
  CHECK(cudaMemset(hbm, 3, static_cast<size_t>(kCtas) * kHbmBoxes * kBox));
  const CUtensorMap map_priv = make_map(priv, kCtas * kPrivateBoxes * 128, 128);
  const CUtensorMap map_shared = make_map(shared, kSharedBoxes * 128, 128);
  const CUtensorMap map_hbm = make_map(hbm, kCtas * kHbmBoxes * 128, 128);
  CtaTiming* dout;
  CHECK(cudaMalloc(&dout, sizeof(CtaTiming) * kCtas));
  CHECK(cudaFuncSetAttribute(k_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));

  // One launch; returns cycles per box by SM (only the SMs that ran) and the median clock.
  auto launch = [&](const Scenario& s, unsigned only, std::map<long long, double>& per_sm, double& mhz) {
    if (s.flush) CHECK(cudaMemset(flush, static_cast<int>(only & 0xff), kFlushBytes));
    // A region of one CTA's boxes: CTA c's first box is c * first_box_of_cta; region_boxes boxes.
    k_stream<<<kCtas, 32, kSmem>>>(*s.map, s.first_box_of_cta, s.region_boxes, s.stagger, s.stages, s.loads, only,
                                   dout);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<double> clocks;
    for (const CtaTiming& t : read_cta_timings(dout, kCtas)) {
      if (t.c1 == 0) continue;
      per_sm[t.smid] = t.cycles() / s.loads;
      clocks.push_back(t.mhz());
    }
    mhz = median(clocks);
  };
  std::printf("scenario,smid,cycles_per_box\n");
  auto report = [&](const std::string& name, const std::map<long long, std::vector<double>>& runs,
                    std::vector<double>& clocks) {
    std::vector<double> meds;
    for (const auto& [sm, v] : runs) {
      std::vector<double> w = v;
      const double m = median(w);
      meds.push_back(m);
      std::printf("%s,%lld,%.1f\n", name.c_str(), sm, m);
    }
    std::vector<double> sorted = meds;
    std::sort(sorted.begin(), sorted.end());
    std::printf("# %s: clock_mhz %.0f, cycles per box min %.1f median %.1f max %.1f over %zu SMs\n", name.c_str(),
                median(clocks), sorted.front(), sorted[sorted.size() / 2], sorted.back(), sorted.size());
    std::fflush(stdout);
  };
  const std::vector<Scenario> all = {
      {"private_l2_s1", &map_priv, kPrivateBoxes, kPrivateBoxes, 0, 1, 1024, false},
      {"private_l2_s2", &map_priv, kPrivateBoxes, kPrivateBoxes, 0, 2, 1024, false},
      {"private_l2_s4", &map_priv, kPrivateBoxes, kPrivateBoxes, 0, 4, 1024, false},
      {"shared_l2_s4", &map_shared, 0, kSharedBoxes, 1, 4, 1024, false},
      {"private_hbm_s2", &map_hbm, kHbmBoxes, kHbmBoxes, 0, 2, kHbmBoxes, true},
  };
  for (const Scenario& s : all) {
    std::map<long long, double> per_sm;
    double mhz = 0;
    launch(s, kCtas, per_sm, mhz);  // warm-up
    std::map<long long, std::vector<double>> runs;
    std::vector<double> clocks;
    for (int r = 0; r < 3; ++r) {
      per_sm.clear();
      launch(s, kCtas, per_sm, mhz);
      clocks.push_back(mhz);
      for (const auto& [sm, c] : per_sm) runs[sm].push_back(c);
    }
    report(s.name, runs, clocks);
  }
  {  // each SM alone: dependent hot boxes
    const Scenario s{"alone_l2_s1", &map_priv, kPrivateBoxes, kPrivateBoxes, 0, 1, 256, false};
    std::map<long long, double> per_sm;
    double mhz = 0;
    launch(s, kCtas, per_sm, mhz);  // every SM's boxes resident
    std::map<long long, std::vector<double>> runs;
    std::vector<double> clocks;
    for (int r = 0; r < 3; ++r)
      for (unsigned sm = 0; sm < kCtas; ++sm) {
        per_sm.clear();
        launch(s, sm, per_sm, mhz);
        clocks.push_back(mhz);
        for (const auto& [id, c] : per_sm) runs[id].push_back(c);
      }
    report(s.name, runs, clocks);
  }
  CHECK(cudaFree(priv));
  CHECK(cudaFree(shared));
  CHECK(cudaFree(hbm));
  CHECK(cudaFree(flush));
  CHECK(cudaFree(dout));
  return 0;
}
