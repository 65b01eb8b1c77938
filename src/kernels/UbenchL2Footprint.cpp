// The L2 footprint sweep of tools/calibration/h100_l2_footprint.cu as a bwsim program: one CTA per
// SM reads 16 KiB boxes of a region of F MiB through 4 stages, every CTA the whole region from a
// staggered start ("shared") or each its own slice ("split"); a warm-up launch makes one pass, the
// measured launch two. The value is the measured launch's HBM bytes read per pass as a share of
// the footprint (x 100): 0 while the L2 holds what the SMs read, 100 or more once it does not.
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kBox = 16384, kBoxRows = 128, kStages = 4, kSmem = 133120;

std::int64_t hbm_per_pass_x100(const HardwareConfig& c, std::uint32_t mib, bool shared) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint32_t n = mib * 64, ctas = c.sm.count;  // 16 KiB boxes
  const std::uint32_t count = shared ? n : n / ctas, stagger = n / ctas;
  const TensorMap map = ubench_box_map(sim.gmem().alloc(static_cast<std::uint64_t>(n) * kBox), n * kBoxRows, kBoxRows);
  auto program = [&](std::uint32_t passes) {
    return [&, passes](Warp& w) -> Task {
      const StagedLoads staged{map, 1024, kBox, kStages};
      staged.init_barriers(w);
      w.fence_mbarrier_init();
      const std::uint32_t start = w.cta_idx() * stagger;
      co_await staged.run(w, count * passes, [&](std::uint32_t i) {
        return TensorCoords{0, static_cast<std::int32_t>(kBoxRows * ((start + i % count) % n))};
      });
    };
  };
  const LaunchConfig launch{.grid_ctas = ctas, .block_threads = 32, .dynamic_smem_bytes = kSmem};
  sim.launch("ubench", launch, program(1));
  const RunResult r = sim.launch("ubench", launch, program(2));
  return static_cast<std::int64_t>(static_cast<double>(r.memory.hbm_read_bytes) * 100.0 /
                                   (2.0 * static_cast<double>(n) * kBox));
}

}  // namespace

std::vector<UbenchScenario> l2_footprint_scenarios() {
  return {{"l2_footprint_shared_hbm_per_pass_x100", UbenchParam::FootprintMib,
           [](const HardwareConfig& c, std::uint32_t mib) { return hbm_per_pass_x100(c, mib, true); }},
          {"l2_footprint_split_hbm_per_pass_x100", UbenchParam::FootprintMib,
           [](const HardwareConfig& c, std::uint32_t mib) { return hbm_per_pass_x100(c, mib, false); }}};
}

}  // namespace bwsim
