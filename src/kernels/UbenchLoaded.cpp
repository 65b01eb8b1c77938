// The loaded-latency microbenchmark of tools/calibration/h100_loaded.cu as a bwsim program: one
// probe SM times dependent TMA loads while every other SM streams 32 KiB boxes from the L2 (its
// own 256 KiB region, or all of them the same region in step); and the HBM box reads of
// tools/calibration/h100_hbm_boxes.cu.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kRowBytes = kUbenchRowBytes, kStreamBox = 32768, kStreamBoxRows = 256, kRegionRows = 2048;
constexpr std::uint32_t kStreamLoads = 2048, kProbeLoads = 64, kProbeBoxes = 8, kSpinCycles = 20000;
constexpr std::uint32_t kSmem = 4 * kStreamBox + 2048;  // more than half an SM: one CTA per SM

// The upper median of the probe's 64 latencies in one launch of the program, after a warm-up
// launch that brings every region and the probe boxes into the L2 (the hardware's two warm-up
// launches; one does it here, the model's L2 keeps whatever it read).
std::int64_t loaded_latency(const HardwareConfig& c, std::uint32_t in_flight, bool shared, bool probe48) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint32_t ctas = c.sm.count, probe_row = ctas * kRegionRows, rows = probe_row + 8192;
  const GmemAddr buffer = sim.gmem().alloc(static_cast<std::uint64_t>(rows) * kRowBytes);
  const TensorMap stream_map = ubench_box_map(buffer, rows, kStreamBoxRows), probe_map = ubench_box_map(buffer, rows, 128);
  std::vector<Cycle> latencies;
  auto program = [&](std::uint32_t stages) {
    return [&, stages](Warp& w) -> Task {
      const std::uint32_t base = 1024;
      if (w.cta_idx() != 0) {  // streaming CTA
        if (stages == 0) co_return;
        const StagedLoads staged{stream_map, base, kStreamBox, stages};
        staged.init_barriers(w);
        const std::uint32_t first = shared ? 0 : w.cta_idx() * kRegionRows;
        co_await staged.run(w, kStreamLoads, [&](std::uint32_t i) {
          return TensorCoords{0, static_cast<std::int32_t>(first + (i * kStreamBoxRows) % kRegionRows)};
        });
        co_return;
      }
      const MBarrierRef bar{base + 49152};
      const std::uint32_t bytes = probe48 ? 49152 : 16384;
      w.mbarrier_init(bar, 1);
      w.fence_mbarrier_init();
      auto load = [&](std::uint32_t j) {
        w.mbarrier_arrive_expect_tx(bar, bytes);
        w.tma_load(probe_map, SmemAddr{base}, bar, {0, static_cast<std::int32_t>(probe_row + j * 128)});
        if (probe48)
          w.tma_load(stream_map, SmemAddr{base + 16384}, bar, {0, static_cast<std::int32_t>(probe_row + 1024 + j * 256)});
      };
      load(0);  // priming, untimed (the launch's descriptor fetch)
      co_await w.mbarrier_wait(bar, 0);
      co_await w.sleep(kSpinCycles);
      latencies.clear();
      for (std::uint32_t i = 0; i < kProbeLoads; ++i) {
        const Cycle t0 = w.now();
        load(i % kProbeBoxes);
        co_await w.mbarrier_wait(bar, (i + 1) & 1u);
        latencies.push_back(w.now() - t0);
      }
    };
  };
  const LaunchConfig launch{.grid_ctas = ctas, .block_threads = 32, .dynamic_smem_bytes = kSmem};
  sim.launch("ubench", launch, program(4));
  sim.launch("ubench", launch, program(in_flight / kStreamBox));
  return static_cast<std::int64_t>(upper_median(latencies));
}

UbenchScenario scenario(const char* name, bool shared, bool probe48) {
  return {name, UbenchParam::StreamInFlight, [shared, probe48](const HardwareConfig& c, std::uint32_t in_flight) {
            return loaded_latency(c, in_flight, shared, probe48);
          }};
}

// tools/calibration/h100_hbm_boxes.cu: `ctas` SMs each read 256 distinct 16 KiB boxes (128 rows
// of 128 B, rows `width` bytes apart, the map's L2 promotion `promotion`) from HBM through
// `stages` stages, after an L2 flush (here a
// fresh simulator: nothing is resident). With one stage, the median over CTAs of cycles per
// dependent load; otherwise 100 x all CTAs' bytes per cycle from the first start to the last end.
std::int64_t hbm_boxes(const HardwareConfig& c, std::uint32_t ctas, std::uint64_t width, std::uint32_t stages,
                       L2Promotion promotion) {
  constexpr std::uint32_t kBox = 16384, kLoads = 256;
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(width / kRowBytes, kLoads));
  const std::uint64_t rows = static_cast<std::uint64_t>(ctas) * (kLoads / n) * 128;
  const TensorMap map = ubench_strided_map(sim.gmem().alloc(width * rows), width, rows, 128, promotion);
  const RunResult r = sim.launch(
      "ubench", LaunchConfig{.grid_ctas = ctas, .block_threads = 32, .dynamic_smem_bytes = 4 * kBox + 67584},
      [&](Warp& w) -> Task {
        const std::uint32_t band = w.cta_idx() * (kLoads / n);
        const StagedLoads staged{map, 1024, kBox, stages};
        staged.init_barriers(w);
        w.fence_mbarrier_init();
        co_await staged.run(w, kLoads, [&](std::uint32_t k) {
          return TensorCoords{static_cast<std::int32_t>(128 * (k % n)), static_cast<std::int32_t>(128 * (band + k / n))};
        });
      });
  if (stages == 1) {
    std::vector<Cycle> spans;
    for (const WarpSummary& s : r.warps) spans.push_back(s.finish - s.start);
    return static_cast<std::int64_t>(upper_median(spans) / kLoads);
  }
  const WarpSpan span = warp_span(r);
  return static_cast<std::int64_t>(static_cast<double>(ctas) * kLoads * kBox / static_cast<double>(span.end - span.begin) *
                                   100);
}

}  // namespace

std::vector<UbenchScenario> hbm_box_scenarios() {
  std::vector<UbenchScenario> all;
  auto add = [&](std::uint64_t width, L2Promotion promotion, const char* suffix) {
    for (std::uint32_t stages : {1u, 2u, 4u}) {
      all.push_back({stages == 1 ? fmt::format("tma_hbm_box_latency_w{}{}", width, suffix)
                                 : fmt::format("tma_hbm_box_stream_w{}{}_s{}_bytes_per_cycle_x100", width, suffix, stages),
                     UbenchParam::Ctas, [width, stages, promotion](const HardwareConfig& c, std::uint32_t ctas) {
                       return hbm_boxes(c, ctas, width, stages, promotion);
                     }});
    }
  };
  for (std::uint64_t width : {128, 8192, 16384, 32768, 33024}) add(width, L2Promotion::B256, "");
  add(32768, L2Promotion::B128, "_p128");
  return all;
}

std::vector<UbenchScenario> loaded_latency_scenarios() {
  return {scenario("tma_latency_under_load_distinct", false, false),
          scenario("tma_latency_under_load_shared", true, false),
          scenario("tma_latency_under_load_distinct_48k", false, true),
          scenario("tma_latency_under_load_shared_48k", true, true)};
}

}  // namespace bwsim
