// The SMEM data port of generic shared-memory accesses, tools/calibration/h100_smem_port.cu as a
// bwsim program: one CTA of W warps, each running `kIters` x 16 accesses of one kind (st.shared.b32
// of 128 B per warp instruction, st.shared.v4 or ld.shared.v4 of 512 B) after a bar.sync; the
// value is the bytes of all warps over the span from the first warp's start to the last warp's end,
// per cycle x 100.
#include <algorithm>
#include <vector>

#include "bwsim/kernels/Ubench.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kIters = 64;
constexpr std::uint32_t kRegion = 4096;  // bytes per warp, as the .cu

enum class Access { StB32, StV4, LdV4 };

std::int64_t port_rate(const HardwareConfig& c, Access access, std::uint32_t warps) {
  const std::uint32_t width = access == Access::StB32 ? 4 : 16, bytes = 32 * width;
  std::vector<Cycle> start(warps), end(warps);
  Simulator sim(c, SimOptions{.mode = Mode::Timing, .check_races = false});
  sim.launch("ubench", LaunchConfig{.grid_ctas = 1, .block_threads = 32 * warps, .dynamic_smem_bytes = warps * kRegion},
             [&](Warp& w) -> Task {
               std::vector<std::byte> data(bytes);
               const std::uint32_t base = w.warp_idx() * kRegion;
               co_await w.syncthreads();
               start[w.warp_idx()] = w.now();
               for (std::uint32_t it = 0; it < kIters; ++it) {
                 for (std::uint32_t k = 0; k < 16; ++k) {
                   const SmemAddr at{base + (bytes * k) % kRegion};
                   if (access == Access::LdV4)
                     w.ld_shared(at, data, width);
                   else
                     w.st_shared(at, data, width);
                 }
                 // No time: the warps take their turns at the port in time order rather than one
                 // whole loop after another (a warp's straight-line code runs ahead of the others).
                 co_await w.sleep(0);
               }
               end[w.warp_idx()] = w.now();
             });
  const Cycle span = *std::max_element(end.begin(), end.end()) - *std::min_element(start.begin(), start.end());
  const double total = static_cast<double>(warps) * kIters * 16 * bytes;
  return static_cast<std::int64_t>(100.0 * total / static_cast<double>(span) + 0.5);
}

}  // namespace

std::vector<UbenchScenario> smem_port_scenarios() {
  std::vector<UbenchScenario> all;
  for (const auto& [name, access] : {std::pair{"smem_port_st_b32_bytes_per_clk_x100", Access::StB32},
                                     std::pair{"smem_port_st_v4_bytes_per_clk_x100", Access::StV4},
                                     std::pair{"smem_port_ld_v4_bytes_per_clk_x100", Access::LdV4}})
    all.push_back({name, UbenchParam::Warps,
                   [access = access](const HardwareConfig& c, std::uint32_t w) { return port_rate(c, access, w); }});
  return all;
}

}  // namespace bwsim
