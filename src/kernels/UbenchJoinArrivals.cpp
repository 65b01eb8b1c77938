// tools/calibration/h100_join_window.cu's arrivals_cold variant as a bwsim program: 64 SMs in
// pairs, a leader and a partner in the same GPC (another TPC) or in another GPC, each pair reading
// 64 boxes of 16 KiB that no one read before, one at a time: load j goes out 4000 j cycles after
// the common start, the partner's `delay` cycles after its leader's, so the partner asks for each
// line while the leader's fill is in flight (delay below the miss latency) or after it landed.
// With `loaded`, the other SMs stream their own 8-box rings of 32 KiB (4 in flight, 600 loads),
// hits after the first pass, as the silicon program's background. The value: the upper median,
// over the pairs' loads 1..63, of the leaders' or the partners' latency (issue to the barrier's
// completion), in cycles.
//
// The silicon program gives the roles by %smid: SMs 0-63 read in pairs (s with s ^ 16 in one GPC,
// s with s ^ 2 across GPCs), the rest stream. By the map of h100_gpc_map.csv (GPC g holds SMs 2g,
// 2g + 1, 2g + 16, 2g + 17, ...) that is 8 readers and 8-10 streamers in every GPC, so both L2
// partitions carry pairs and background alike. Here the SMs are numbered GPC by GPC
// (hw/sm/ChipLayout), so SM i of GPC g plays silicon's SM 16 (i / 2) + 2 g + i % 2, and streams
// from i = 8 on.
#include <fmt/format.h>

#include <vector>

#include "bwsim/hw/sm/ChipLayout.hpp"
#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/sm/Sm.hpp"
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kBox = 16384, kBoxRows = 128, kLoads = 64, kPairs = 80, kPace = 4000;
constexpr std::uint32_t kRingBox = 32768, kRingRows = 256, kRingBoxes = 8, kRingLoads = 600, kRingStages = 4;
constexpr std::uint32_t kRings = 80;  // rings for up to 10 streaming SMs in each of 8 GPCs

enum class Pairing { Gpc, Cross };
enum class Role { Lead, Partner };

std::int64_t cold_arrivals(const HardwareConfig& c, Pairing pairing, bool loaded, Role role, std::uint32_t delay) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const ChipLayout layout = chip_layout(c);
  const std::uint32_t bit = pairing == Pairing::Gpc ? 16 : 2;
  const GmemAddr data = sim.gmem().alloc(static_cast<std::uint64_t>(kPairs) * kLoads * kBox);
  const TensorMap map = ubench_box_map(data, kPairs * kLoads * kBoxRows, kBoxRows);
  const std::uint32_t ring_rows = kRings * kRingBoxes * kRingRows;
  const TensorMap ring = ubench_box_map(sim.gmem().alloc(static_cast<std::uint64_t>(ring_rows) * kUbenchRowBytes),
                                        ring_rows, kRingRows);
  std::vector<Cycle> latencies;
  sim.launch(
      "ubench", LaunchConfig{.grid_ctas = c.sm.count, .block_threads = 32, .dynamic_smem_bytes = kRingStages * kRingBox + 2048},
      [&](Warp& w) -> Task {
        const std::uint32_t sm = w.cta().sm().index(), gpc = layout.gpc[sm], i = sm - layout.gpc_first[gpc];
        if (i >= 8) {
          if (!loaded) co_return;
          const StagedLoads staged{ring, 1024, kRingBox, kRingStages};
          staged.init_barriers(w);
          w.fence_mbarrier_init();
          const std::uint32_t first = (gpc * 10 + i - 8) * kRingBoxes * kRingRows;  // a ring of its own
          co_await staged.run(w, kRingLoads, [&](std::uint32_t k) {
            return TensorCoords{0, static_cast<std::int32_t>(first + (k % kRingBoxes) * kRingRows)};
          });
          co_return;
        }
        const std::uint32_t silicon_sm = silicon_smid(layout, sm);
        const bool partner = (silicon_sm & bit) != 0;
        const std::uint32_t pair = silicon_sm & ~bit;
        const MBarrierRef bar{1024 + kBox};
        w.mbarrier_init(bar, 1);
        w.fence_mbarrier_init();
        const Cycle start = w.now() + (partner ? delay : 0);
        for (std::uint32_t j = 0; j < kLoads; ++j) {
          const Cycle due = start + static_cast<Cycle>(j) * kPace;
          if (w.now() < due) co_await w.sleep(due - w.now());
          const Cycle issued = w.now();
          w.mbarrier_arrive_expect_tx(bar, kBox);
          w.tma_load(map, SmemAddr{1024}, bar, {0, static_cast<std::int32_t>((pair * kLoads + j) * kBoxRows)});
          co_await w.mbarrier_wait(bar, j & 1u);
          if (j > 0 && partner == (role == Role::Partner)) latencies.push_back(w.now() - issued);
        }
      });
  return static_cast<std::int64_t>(upper_median(latencies));
}

}  // namespace

std::vector<UbenchScenario> join_arrival_scenarios() {
  std::vector<UbenchScenario> all;
  for (const Pairing pairing : {Pairing::Gpc, Pairing::Cross})
    for (const bool loaded : {false, true})
      for (const Role role : {Role::Lead, Role::Partner})
        all.push_back({fmt::format("join_arrivals_cold_{}{}_{}_latency", pairing == Pairing::Gpc ? "gpc" : "cross",
                                   loaded ? "_loaded" : "", role == Role::Lead ? "lead" : "partner"),
                       UbenchParam::DelayCycles, [pairing, loaded, role](const HardwareConfig& c, std::uint32_t delay) {
                         return cold_arrivals(c, pairing, loaded, role, delay);
                       }});
  return all;
}

}  // namespace bwsim
