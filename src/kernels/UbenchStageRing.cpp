// The stage ring of tools/calibration/h100_stage_ring.cu as a bwsim program: a GEMM mainloop's
// memory side with a clock for the MMA. G CTAs, one per SM, each step through 256 k-blocks of a
// 2- or 4-stage ring; a stage holds the k-block's A box (16 KiB from HBM: the CTA's own 128 rows,
// 32 KiB apart), its B box (32 KiB: 256 rows every CTA reads at the same k, L2-resident after the
// warm-up launch when read alone, evicted by the A stream beside it), or both. "MMA" k starts
// once its stage is full and MMA k-1 has run 1024 cycles; its start frees stage (k-1) % S,
// refilled with k-block k-1+S. The value: the median over the CTAs of cycles per k-block in the
// launch after the warm-up.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kA = 16384, kB = 32768, kStage = kA + kB, kSteps = 256, kMaxStages = 4;
constexpr std::uint64_t kWidth = 32768;  // K = 16384 bf16: 256 k-blocks of 128 B
constexpr Cycle kMma = 1024;             // a 128x256x64 bf16 wgmma k-block at 4096 FLOP per cycle

constexpr std::uint32_t A = 1, B = 2;  // the parts of a stage

std::int64_t cycles_per_kblock(const HardwareConfig& c, std::uint32_t ctas, std::uint32_t parts, std::uint32_t stages) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint64_t a_rows = static_cast<std::uint64_t>(c.sm.count) * 128, b_rows = 256;
  const TensorMap a = ubench_strided_map(sim.gmem().alloc(kWidth * a_rows), kWidth, a_rows, 128, L2Promotion::B256);
  const TensorMap b = ubench_strided_map(sim.gmem().alloc(kWidth * b_rows), kWidth, b_rows, 256, L2Promotion::B256);
  const LaunchConfig launch{.grid_ctas = ctas, .block_threads = 32, .dynamic_smem_bytes = kMaxStages * kStage + 2048};
  auto program = [&](Warp& w) -> Task {
    const std::uint32_t base = 1024, bars = base + kMaxStages * kStage;
    auto barrier = [&](std::uint32_t s) { return MBarrierRef{bars + 8 * s}; };
    auto load_stage = [&](std::uint32_t s, std::uint32_t k) {
      w.mbarrier_arrive_expect_tx(barrier(s), ((parts & A) ? kA : 0) + ((parts & B) ? kB : 0));
      const auto x = static_cast<std::int32_t>(128 * k);
      if (parts & A) w.tma_load(a, SmemAddr{base + s * kStage}, barrier(s), {x, static_cast<std::int32_t>(128 * w.cta_idx())});
      if (parts & B) w.tma_load(b, SmemAddr{base + s * kStage + kA}, barrier(s), {x, 0});
    };
    for (std::uint32_t s = 0; s < stages; ++s) w.mbarrier_init(barrier(s), 1);
    w.fence_mbarrier_init();
    for (std::uint32_t k = 0; k < stages; ++k) load_stage(k, k);
    Cycle mma_end = 0;
    for (std::uint32_t k = 0; k < kSteps; ++k) {
      co_await w.mbarrier_wait(barrier(k % stages), (k / stages) & 1u);
      if (w.now() < mma_end) co_await w.sleep(mma_end - w.now());
      mma_end = w.now() + kMma;
      const std::uint32_t refill = k - 1 + stages;
      if (k >= 1 && refill < kSteps) load_stage((k - 1) % stages, refill);
    }
    if (w.now() < mma_end) co_await w.sleep(mma_end - w.now());
  };
  sim.launch("ubench", launch, program);  // warm-up: B into the L2
  const RunResult r = sim.launch("ubench", launch, program);
  std::vector<Cycle> spans;
  for (const WarpSummary& s : r.warps) spans.push_back(s.finish - s.start);
  std::sort(spans.begin(), spans.end());
  return static_cast<std::int64_t>(spans[spans.size() / 2] / kSteps);
}

}  // namespace

std::vector<UbenchScenario> stage_ring_scenarios() {
  std::vector<UbenchScenario> all;
  const std::pair<std::uint32_t, const char*> kinds[] = {{A, "a"}, {B, "b"}, {A | B, "ab"}};
  for (const auto& [parts, name] : kinds) {
    for (std::uint32_t stages : {2u, 4u}) {
      all.push_back({fmt::format("stage_ring_{}_s{}_cycles_per_kblock", name, stages), UbenchParam::Ctas,
                     [parts = parts, stages](const HardwareConfig& c, std::uint32_t ctas) {
                       return cycles_per_kblock(c, ctas, parts, stages);
                     }});
    }
  }
  return all;
}

}  // namespace bwsim
