// tools/calibration/h100_tma_reduce.cu as bwsim programs: G CTAs (one per SM, 32 threads) each
// send N = 64 f32 boxes of 32 rows x 128 columns (16 KiB, no swizzle) from one SMEM box, as TMA
// stores or TMA reduce-adds, with up to P in flight (wait_group.read P-1 after each commit), then
// wait for all. CTA c's box i goes to band (c N + i) % bands: 4 bands per CTA for the l2
// destination (resident after a warm-up launch), N per CTA for hbm (a cold L2).
// - <op>_<dest>_p<P>_cycles_per_box, param G: the median CTA's span over N;
// - <op>_<dest>_p<P>_bytes_per_cycle, param G: G N 16 KiB over that span;
// - <op>_<dest>_latency_cycles, param 1: one box alone, issue to wait_group 0.
#include <fmt/format.h>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kCols = 128, kBoxRows = 32, kBox = kCols * kBoxRows * 4, kN = 64, kMaxCtas = 132;

struct Stream {
  bool reduce, hbm;
  std::uint32_t in_flight;
};

// The median CTA span of a launch of `g` CTAs each sending `n` boxes (after a warm-up launch for
// the l2 destination).
double median_span(const HardwareConfig& c, const Stream& s, std::uint32_t g, std::uint32_t n) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint64_t rows = 1ull * kMaxCtas * kN * kBoxRows;
  const TensorMap map = TensorMap::tiled({.dtype = DataType::F32, .address = sim.gmem().alloc(rows * kCols * 4),
                                          .dims = {kCols, rows}, .strides = {kCols * 4}, .box = {kCols, kBoxRows}});
  const std::uint32_t bands = n == 1 ? 1 : s.hbm ? g * n : 4 * g;
  std::vector<Cycle> spans(g);
  auto program = [&](Warp& w) -> Task {
    const Cycle t0 = w.now();
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto band = static_cast<std::int32_t>((w.cta_idx() * n + i) % bands);
      if (s.reduce)
        w.tma_reduce_add(map, SmemAddr{0}, {0, band * static_cast<std::int32_t>(kBoxRows)});
      else
        w.tma_store(map, SmemAddr{0}, {0, band * static_cast<std::int32_t>(kBoxRows)});
      w.bulk_commit_group();
      co_await w.bulk_wait_group_read(s.in_flight - 1);
    }
    co_await w.bulk_wait_group(0);
    spans[w.cta_idx()] = w.now() - t0;
  };
  const LaunchConfig launch{.grid_ctas = g, .block_threads = 32, .dynamic_smem_bytes = 66 * 1024};
  if (!s.hbm) sim.launch("ubench", launch, program);  // the bands resident
  sim.launch("ubench", launch, program);
  return static_cast<double>(upper_median(spans));
}

}  // namespace

std::vector<UbenchScenario> bulk_write_scenarios() {
  std::vector<UbenchScenario> all;
  for (const bool hbm : {false, true})
    for (const bool reduce : {false, true}) {
      const std::string base = fmt::format("{}_{}", reduce ? "reduce" : "store", hbm ? "hbm" : "l2");
      all.push_back({base + "_latency_cycles", UbenchParam::Ignored, [=](const HardwareConfig& c, std::uint32_t) {
                       return static_cast<std::int64_t>(median_span(c, {reduce, hbm, 1}, 1, 1));
                     }});
      for (const std::uint32_t p : {1u, 2u, 4u}) {
        const Stream s{reduce, hbm, p};
        all.push_back({fmt::format("{}_p{}_cycles_per_box", base, p), UbenchParam::Ctas,
                       [=](const HardwareConfig& c, std::uint32_t g) {
                         return static_cast<std::int64_t>(median_span(c, s, g, kN) / kN + 0.5);
                       }});
        all.push_back({fmt::format("{}_p{}_bytes_per_cycle", base, p), UbenchParam::Ctas,
                       [=](const HardwareConfig& c, std::uint32_t g) {
                         return static_cast<std::int64_t>(1.0 * g * kN * kBox / median_span(c, s, g, kN) + 0.5);
                       }});
      }
    }
  return all;
}

}  // namespace bwsim
