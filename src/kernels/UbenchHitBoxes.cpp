// tools/calibration/h100_hit_boxes.cu as bwsim programs: one CTA on an idle chip times single TMA
// loads of a box of R rows x 128 B whose rows lie W bytes apart (W = 128: contiguous), from
// arrive.expect_tx to the mbarrier wait's return, the mean of 40 loads after 8 warm-up ones.
// - tma_hit_box_latency_w<W>, param R: the same box every time (hot in the L2).
// - tma_cold_box_latency_w32768_p<P>, param 128: a box of rows never read, L2 promotion P.
// - tma_promoted_box_latency_w32768, param D: a cold box with 256B promotion, D cycles, then the
//   box of the next 128-byte column (lines the miss promoted), timed.
#include <fmt/format.h>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kIters = 40, kWarm = 8;
constexpr std::uint64_t kColdRows = 128ull * (kIters + kWarm), kColdWidth = 32768;

enum class Box { Hot, Cold, Promoted };  // what the timed load finds

std::int64_t box_latency(const HardwareConfig& c, std::uint64_t width, std::uint32_t rows, L2Promotion promotion,
                         Box mode, Cycle delay) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint64_t data_bytes = kColdWidth * kColdRows;
  const TensorMap map = ubench_strided_map(sim.gmem().alloc(data_bytes), width, data_bytes / width, rows, promotion);
  const std::uint32_t box_bytes = rows * kUbenchRowBytes;
  Cycle total = 0;
  auto program = [&](Warp& w) -> Task {
    const SmemAddr dst{1024};
    const MBarrierRef bar{1024 + box_bytes};
    w.mbarrier_init(bar, 1);
    w.fence_mbarrier_init();
    std::uint32_t phase = 0;
    Cycle t0 = 0;
    for (std::uint32_t i = 0; i < kIters + kWarm; ++i) {
      const auto y = mode == Box::Hot ? 0 : static_cast<std::int32_t>(128 * i);
      if (mode == Box::Promoted) {  // the cold box, untimed, then the delay
        w.mbarrier_arrive_expect_tx(bar, box_bytes);
        w.tma_load(map, dst, bar, {0, y});
        co_await w.mbarrier_wait(bar, phase);
        phase ^= 1;
        if (delay) co_await w.sleep(delay);
      }
      t0 = w.now();
      w.mbarrier_arrive_expect_tx(bar, box_bytes);
      w.tma_load(map, dst, bar, {mode == Box::Promoted ? 128 : 0, y});
      co_await w.mbarrier_wait(bar, phase);
      phase ^= 1;
      if (i >= kWarm) total += w.now() - t0;
    }
  };
  sim.launch("ubench", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = box_bytes + 2048},
             program);
  return static_cast<std::int64_t>(total / kIters);
}

}  // namespace

std::vector<UbenchScenario> hit_box_scenarios() {
  std::vector<UbenchScenario> all;
  for (std::uint64_t w : {128ull, 256ull, 1024ull, 8192ull, 32768ull})
    all.push_back({fmt::format("tma_hit_box_latency_w{}", w), UbenchParam::BoxRows,
                   [w](const HardwareConfig& c, std::uint32_t rows) {
                     return box_latency(c, w, rows, L2Promotion::B256, Box::Hot, 0);
                   }});
  for (const auto& [promotion, name] : {std::pair{L2Promotion::B128, "p128"}, std::pair{L2Promotion::B256, "p256"}})
    all.push_back({fmt::format("tma_cold_box_latency_w32768_{}", name), UbenchParam::BoxRows,
                   [promotion = promotion](const HardwareConfig& c, std::uint32_t rows) {
                     return box_latency(c, kColdWidth, rows, promotion, Box::Cold, 0);
                   }});
  all.push_back({"tma_promoted_box_latency_w32768", UbenchParam::DelayCycles,
                 [](const HardwareConfig& c, std::uint32_t delay) {
                   return box_latency(c, kColdWidth, 128, L2Promotion::B256, Box::Promoted, delay);
                 }});
  return all;
}

}  // namespace bwsim
