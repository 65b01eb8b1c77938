// tools/calibration/h100_hbm_burst.cu as a bwsim program: G CTAs, one per SM, each issue P 16 KiB
// TMA boxes at the same cycle on an empty L2 and wait for them on one barrier.
// - burst_span_cycles_<pattern>_<how>_p<P>, param G: the last CTA's end minus the first's start;
// - burst_latency_cycles_<pattern>_<how>_p<P>, param G: the median CTA's end minus its start.
// Box j of CTA c is band 4c + j (128 rows) of a tensor of rows W bytes apart at column x:
// same (W 32 KiB, x = 40 x 128 B), staggered (W 32 KiB, x = (4c + j) x 37 % 256 x 128 B), same16k
// and same64k (W 16 / 64 KiB), contiguous (W 128 B: each box 16 KiB in one piece). <how> is how the
// hardware run emptied the L2: m (cudaMemset of 256 MiB: dirty lines whose write-backs the burst
// pays), r (a read of 256 MiB: clean lines), with t (the boxes' pages touched first: TLB entries).
// The model has no write-backs and no TLB, so the four conditions simulate alike.
#include <fmt/format.h>

#include <vector>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kBox = 16384, kBoxRows = 128, kMaxBoxes = 4;
constexpr Cycle kStart = 4000;  // the common start (the hardware's %globaltimer target)

enum class Pattern { Same, Staggered, Contiguous };

struct Shape {
  const char* name;
  Pattern pattern;
  std::uint64_t width;
};

struct Burst {
  std::int64_t span = 0, latency = 0;
};

Burst burst(const HardwareConfig& c, const Shape& shape, std::uint32_t boxes, std::uint32_t ctas) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint64_t rows = static_cast<std::uint64_t>(c.sm.count) * kMaxBoxes * kBoxRows;
  const TensorMap map =
      ubench_strided_map(sim.gmem().alloc(shape.width * rows), shape.width, rows, kBoxRows, L2Promotion::B256);
  std::vector<Cycle> start(ctas), end(ctas);
  auto program = [&](Warp& w) -> Task {
    const MBarrierRef bar{1024 + kMaxBoxes * kBox};
    w.mbarrier_init(bar, 1);
    w.fence_mbarrier_init();
    if (w.now() < kStart) co_await w.sleep(kStart - w.now());
    const std::uint32_t cta = w.cta_idx();
    start[cta] = w.now();
    w.mbarrier_arrive_expect_tx(bar, boxes * kBox);
    for (std::uint32_t j = 0; j < boxes; ++j) {
      const std::uint32_t band = kMaxBoxes * cta + j;
      const std::uint32_t col = shape.pattern == Pattern::Contiguous ? 0
                                : shape.pattern == Pattern::Same     ? 40
                                                                     : band * 37 % 256;
      w.tma_load(map, SmemAddr{1024 + j * kBox}, bar,
                 {static_cast<std::int32_t>(128 * col), static_cast<std::int32_t>(kBoxRows * band)});
    }
    co_await w.mbarrier_wait(bar, 0);
    end[cta] = w.now();
  };
  sim.launch("ubench", LaunchConfig{.grid_ctas = ctas, .block_threads = 32, .dynamic_smem_bytes = 133120}, program);
  std::vector<Cycle> latency;
  Cycle first = start[0], last = end[0];
  for (std::uint32_t i = 0; i < ctas; ++i) {
    first = std::min(first, start[i]);
    last = std::max(last, end[i]);
    latency.push_back(end[i] - start[i]);
  }
  return Burst{static_cast<std::int64_t>(last - first), static_cast<std::int64_t>(upper_median(latency))};
}

}  // namespace

std::vector<UbenchScenario> hbm_burst_scenarios() {
  static constexpr Shape kShapes[] = {{"same", Pattern::Same, 32768},
                                      {"staggered", Pattern::Staggered, 32768},
                                      {"contiguous", Pattern::Contiguous, 128},
                                      {"same16k", Pattern::Same, 16384},
                                      {"same64k", Pattern::Same, 65536}};
  std::vector<UbenchScenario> all;
  for (const Shape& shape : kShapes)
    for (const char* how : {"m", "mt", "r", "rt"})
      for (std::uint32_t boxes : {1u, 2u, 4u}) {
        const std::string suffix = fmt::format("{}_{}_p{}", shape.name, how, boxes);
        all.push_back({"burst_span_cycles_" + suffix, UbenchParam::Ctas,
                       [shape, boxes](const HardwareConfig& c, std::uint32_t g) { return burst(c, shape, boxes, g).span; }});
        all.push_back({"burst_latency_cycles_" + suffix, UbenchParam::Ctas, [shape, boxes](const HardwareConfig& c,
                                                                                         std::uint32_t g) {
                         return burst(c, shape, boxes, g).latency;
                       }});
      }
  return all;
}

}  // namespace bwsim
