// tools/calibration/h100_hit_miss_mix.cu as a bwsim program: every SM streams 32 KiB boxes with
// `param` bytes in flight (one thread issuing), MISSES of every PERIOD loads from its own cold
// region (read once in the run: HBM) and the rest from its own hot 128 KiB; a warm-up launch, then
// two timed ones (each launch its own cold boxes), the better kept. Aggregate bytes per ns x 100
// from the first CTA start to the last CTA end (tma_stream_mix_<MISSES>of<PERIOD>_bytes_per_ns_x100).
#include <fmt/format.h>

#include <algorithm>

#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kBox = 32768, kBoxRows = kBox / kUbenchRowBytes, kLoads = 384, kHotBoxes = 4;
constexpr std::uint32_t kColdBoxesPerSm = 4 * kLoads;

std::int64_t hit_miss_mix(const HardwareConfig& c, std::uint32_t in_flight, std::uint32_t misses, std::uint32_t period) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint32_t sms = c.sm.count, stages = in_flight / kBox;
  const std::uint32_t cold_first_row = sms * kHotBoxes * kBoxRows;
  const std::uint32_t rows = cold_first_row + sms * kColdBoxesPerSm * kBoxRows;
  const TensorMap map = ubench_box_map(sim.gmem().alloc(static_cast<std::uint64_t>(rows) * kUbenchRowBytes), rows,
                                       kBoxRows);
  const StagedLoads staged{map, 1024, kBox, stages};
  std::uint32_t launch = 0;
  auto program = [&](Warp& w) -> Task {
    staged.init_barriers(w);
    const std::uint32_t sm = w.cta_idx();
    std::uint32_t hot = 0, cold = (launch * kLoads) % kColdBoxesPerSm;
    co_await staged.run(w, kLoads, [&](std::uint32_t i) {
      std::uint32_t row;
      if (i % period < misses) {
        row = cold_first_row + (sm * kColdBoxesPerSm + cold) * kBoxRows;
        cold = (cold + 1) % kColdBoxesPerSm;
      } else {
        row = (sm * kHotBoxes + hot) * kBoxRows;
        hot = (hot + 1) % kHotBoxes;
      }
      return TensorCoords{0, static_cast<std::int32_t>(row)};
    });
  };
  const LaunchConfig lc{.grid_ctas = sms, .block_threads = 32, .dynamic_smem_bytes = staged.smem_bytes()};
  double best = 0;
  for (std::uint32_t rep = 0; rep < 3; ++rep, ++launch) {
    const WarpSpan span = warp_span(sim.launch("ubench", lc, program));
    if (rep == 0) continue;  // the warm-up: the hot regions into the L2
    best = std::max(best, static_cast<double>(sms) * kLoads * kBox / static_cast<double>(span.end - span.begin));
  }
  return static_cast<std::int64_t>(best * c.clock_ghz * 100);
}

}  // namespace

std::vector<UbenchScenario> hit_miss_mix_scenarios() {
  std::vector<UbenchScenario> all;
  for (const auto& [misses, period] : {std::pair{0u, 1u}, {1u, 8u}, {1u, 4u}, {1u, 3u}, {1u, 2u}, {1u, 1u}})
    all.push_back({fmt::format("tma_stream_mix_{}of{}_bytes_per_ns_x100", misses, period), UbenchParam::InFlight,
                   [misses = misses, period = period](const HardwareConfig& c, std::uint32_t in_flight) {
                     return hit_miss_mix(c, in_flight, misses, period);
                   }});
  return all;
}

}  // namespace bwsim
