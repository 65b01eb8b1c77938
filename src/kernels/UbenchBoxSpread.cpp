// tools/calibration/h100_box_spread.cu as a bwsim program: every SM (all) or one CTA (one) keeps S boxes of 16 KiB in
// flight through one thread (the GEMM producer's loop), cycling through 8 boxes of its own that a
// warm-up launch left in the L2 (l2), or reading data no load read before (hbm). Per box, the
// thread's cycle before the load and after the wait that sees it land give its latency and the
// interval since the stream's previous box landed; the figures pool loads kSkip.. of every CTA,
// with the CUDA program's definitions (the CSV's param is S):
// - box_spread_<l2|hbm>_<all|one>_interval_cv_x1000: the intervals' standard deviation over their mean;
// - box_spread_<l2|hbm>_<all|one>_{interval,latency}_p{10,50,90}: cycles, the value at rank q x count of
//   the sorted values;
// - box_spread_<l2|hbm>_<all|one>_bytes_per_cycle_x100: all CTAs' bytes over the slowest CTA's span.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kBoxBytes = 16384, kBoxRows = kBoxBytes / kUbenchRowBytes, kLoads = 512, kSkip = 64,
                        kHotBoxes = 8;

struct Spread {
  std::vector<double> intervals, latencies;
  double bytes_per_cycle = 0;
};

Spread box_spread(const HardwareConfig& c, bool hot, bool all_sms, std::uint32_t stages) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint32_t ctas = all_sms ? c.sm.count : 1;
  const std::uint64_t rows = static_cast<std::uint64_t>(ctas) * kLoads * kBoxRows;
  const TensorMap map = ubench_strided_map(sim.gmem().alloc(rows * kUbenchRowBytes), kUbenchRowBytes, rows, kBoxRows,
                                           L2Promotion::B128);
  const std::uint32_t region = hot ? kHotBoxes : kLoads;
  std::vector<Cycle> issued(static_cast<std::size_t>(ctas) * kLoads), landed(issued.size());
  // The CUDA program's SMEM: the boxes from a 1024-aligned base, their barriers after them.
  const StagedLoads staged{map, 1024, kBoxBytes, stages};
  auto program = [&](Warp& w) -> Task {
    staged.init_barriers(w);
    w.fence_mbarrier_init();
    const std::size_t slot0 = static_cast<std::size_t>(w.cta_idx()) * kLoads;  // the CTA's first log slot
    co_await staged.run(
        w, kLoads,
        [&](std::uint32_t i) {
          issued[slot0 + i] = w.now();
          return TensorCoords{0, static_cast<std::int32_t>((w.cta_idx() * region + i % region) * kBoxRows)};
        },
        [&](std::uint32_t i) { landed[slot0 + i] = w.now(); });
  };
  const LaunchConfig launch{.grid_ctas = ctas, .block_threads = 32, .dynamic_smem_bytes = staged.smem_bytes()};
  if (hot) sim.launch("ubench warm-up", launch, program);  // every CTA's boxes into the L2
  sim.launch("ubench", launch, program);
  Spread r;
  Cycle span = 0;
  for (std::size_t cta = 0; cta < ctas; ++cta) {
    const Cycle* is = &issued[cta * kLoads];
    const Cycle* la = &landed[cta * kLoads];
    span = std::max(span, la[kLoads - 1] - is[0]);
    for (std::uint32_t j = kSkip; j < kLoads; ++j) {
      r.intervals.push_back(static_cast<double>(la[j] - la[j - 1]));
      r.latencies.push_back(static_cast<double>(la[j] - is[j]));
    }
  }
  r.bytes_per_cycle = static_cast<double>(ctas) * kLoads * kBoxBytes / static_cast<double>(span);
  return r;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

double cv(const std::vector<double>& v) {
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  return std::sqrt(var / static_cast<double>(v.size())) / mean;
}

}  // namespace

std::vector<UbenchScenario> box_spread_scenarios() {
  using Figure = double (*)(const Spread&);
  const std::pair<const char*, Figure> figures[] = {
      {"interval_cv_x1000", [](const Spread& s) { return 1000 * cv(s.intervals); }},
      {"interval_p10", [](const Spread& s) { return quantile(s.intervals, 0.1); }},
      {"interval_p50", [](const Spread& s) { return quantile(s.intervals, 0.5); }},
      {"interval_p90", [](const Spread& s) { return quantile(s.intervals, 0.9); }},
      {"latency_p10", [](const Spread& s) { return quantile(s.latencies, 0.1); }},
      {"latency_p50", [](const Spread& s) { return quantile(s.latencies, 0.5); }},
      {"latency_p90", [](const Spread& s) { return quantile(s.latencies, 0.9); }},
      {"bytes_per_cycle_x100", [](const Spread& s) { return 100 * s.bytes_per_cycle; }},
  };
  std::vector<UbenchScenario> all;
  for (const bool hot : {true, false})
    for (const bool all_sms : {true, false})
      for (const auto& [what, figure] : figures)
        all.push_back({fmt::format("box_spread_{}_{}_{}", hot ? "l2" : "hbm", all_sms ? "all" : "one", what),
                       UbenchParam::BoxStages, [hot, all_sms, figure](const HardwareConfig& c, std::uint32_t stages) {
                         return static_cast<std::int64_t>(std::llround(figure(box_spread(c, hot, all_sms, stages))));
                       }});
  return all;
}

}  // namespace bwsim
