// h100_gemm_loads.cu --private-a --parts a as a bwsim program: G CTAs, one per SM, each loading
// its own A boxes (16 KiB: 128 rows of 128 B, the CTA's own rows of a K = 4096 bf16 operand) with
// S stages in flight and no consumer, 4 tiles of 64 k-blocks: either cycling through the first 4
// k-blocks ("l2": hot in the L2 after a warm-up launch) or walking all 64 each tile ("hbm": from
// HBM). The value is the rate all SMs together receive, sum over SMs of bytes / span, in bytes per
// cycle x 100 (tools/calibration/h100_loads_private.csv: the same sum over the silicon tile logs),
// or ("fast_pace") the mean span of the SMs in CPCs short of TPCs over the median SM's, x 1000
// (silicon: tile_drift.py --fast-set, the fast set's pace).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "bwsim/hw/sm/ChipLayout.hpp"
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

// 4 MiB per CTA: 4 tiles of 64 k-blocks of 16 KiB boxes (128 rows of 128 B); other box heights
// (loads_depth_*) keep the bytes. At most 192 KiB of stages in flight.
constexpr std::uint32_t kRowBytes = 128, kCtaBytes = 4u << 20, kMaxStageBytes = 192u << 10;
constexpr std::uint64_t kWidth = 8192;  // K = 4096 bf16

enum class Value { Rate, FastPace };

// The short CPCs' SMs' mean span over the median span, x 1000.
std::int64_t short_cpc_pace(const HardwareConfig& c, const RunResult& r) {
  const ChipLayout layout = chip_layout(c);
  std::map<std::uint32_t, std::uint32_t> cpc_sms;
  for (const std::uint32_t cpc : layout.cpc) ++cpc_sms[cpc];
  std::uint32_t full = 0;
  for (const auto& [cpc, n] : cpc_sms) full = std::max(full, n);
  std::vector<double> spans;
  double short_sum = 0;
  std::uint32_t short_n = 0;
  for (const WarpSummary& s : r.warps) {
    const auto span = static_cast<double>(s.finish - s.start);
    spans.push_back(span);
    if (cpc_sms[layout.cpc[s.sm]] < full) short_sum += span, ++short_n;
  }
  if (!short_n || spans.empty()) return 1000;
  std::nth_element(spans.begin(), spans.begin() + spans.size() / 2, spans.end());
  return std::lround(1000.0 * short_sum / short_n / spans[spans.size() / 2]);
}

std::int64_t private_stream(const HardwareConfig& c, std::uint32_t ctas, std::uint32_t stages, bool hot, Value value,
                            std::uint32_t box_rows = 128) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint32_t box_bytes = box_rows * kRowBytes, kblocks = kCtaBytes / box_bytes;
  const std::uint64_t rows = static_cast<std::uint64_t>(ctas) * box_rows;
  const TensorMap a = ubench_strided_map(sim.gmem().alloc(kWidth * rows), kWidth, rows, box_rows, L2Promotion::B256);
  const LaunchConfig launch{.grid_ctas = ctas, .block_threads = 32, .dynamic_smem_bytes = kMaxStageBytes + 2048};
  auto program = [&](Warp& w) -> Task {
    const std::uint32_t base = 1024, bars = base + kMaxStageBytes;
    auto bar = [&](std::uint32_t s) { return MBarrierRef{bars + 8 * s}; };
    for (std::uint32_t s = 0; s < stages; ++s) w.mbarrier_init(bar(s), 1);
    w.fence_mbarrier_init();
    const auto band = static_cast<std::int32_t>(box_rows * w.cta_idx());
    for (std::uint32_t k = 0; k < kblocks; ++k) {
      const std::uint32_t s = k % stages;
      if (k >= stages) co_await w.mbarrier_wait(bar(s), ((k - stages) / stages) & 1u);
      w.mbarrier_arrive_expect_tx(bar(s), box_bytes);
      const std::uint32_t kb = hot ? k % 4 : k % 64;  // hbm: a tile's 64 k-blocks, again each tile
      w.tma_load(a, SmemAddr{base + s * box_bytes}, bar(s), {static_cast<std::int32_t>(128 * kb), band});
    }
    for (std::uint32_t k = kblocks - std::min(kblocks, stages); k < kblocks; ++k)
      co_await w.mbarrier_wait(bar(k % stages), (k / stages) & 1u);
  };
  if (hot) sim.launch("ubench", launch, program);  // warm-up: the hot boxes into the L2
  const RunResult r = sim.launch("ubench", launch, program);
  if (value == Value::FastPace) return short_cpc_pace(c, r);
  double rate = 0;
  for (const WarpSummary& s : r.warps)
    rate += static_cast<double>(kCtaBytes) / static_cast<double>(s.finish - s.start);
  return static_cast<std::int64_t>(std::lround(100.0 * rate));
}

}  // namespace

std::vector<UbenchScenario> private_stream_scenarios() {
  std::vector<UbenchScenario> all;
  for (const bool hot : {true, false})
    for (std::uint32_t stages = 1; stages <= 6; ++stages)
      for (const Value value : {Value::Rate, Value::FastPace})
        all.push_back({fmt::format("loads_private_{}_s{}_{}", hot ? "l2" : "hbm", stages,
                                   value == Value::Rate ? "bytes_per_cycle_x100" : "fast_pace_x1000"),
                       UbenchParam::Ctas, [stages, hot, value](const HardwareConfig& c, std::uint32_t ctas) {
                         return private_stream(c, ctas, stages, hot, value);
                       }});
  // run_cpc_depth.sh's sweep: the short CPCs' pace by box height and stages in flight.
  for (const bool hot : {true, false})
    for (const std::uint32_t box_rows : {64u, 128u, 256u})
      for (std::uint32_t stages = 1; stages * box_rows * kRowBytes <= kMaxStageBytes; ++stages)
        all.push_back({fmt::format("loads_depth_{}_r{}_s{}_fast_pace_x1000", hot ? "l2" : "hbm", box_rows, stages),
                       UbenchParam::Ctas, [stages, hot, box_rows](const HardwareConfig& c, std::uint32_t ctas) {
                         return private_stream(c, ctas, stages, hot, Value::FastPace, box_rows);
                       }});
  return all;
}

}  // namespace bwsim
