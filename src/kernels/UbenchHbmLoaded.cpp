// tools/calibration/h100_hbm_loaded.cu as a bwsim program: one probe SM times 16 KiB TMA boxes,
// cold from HBM or its one primed box hot in the L2, while B other SMs each stream their own HBM
// region (16 MiB, 1024 boxes) through S stages, a box issued at least D cycles after the one
// before. The background counts the boxes that land while the probe is timing (a flag the probe
// sets); the probe primes its box 0 (the descriptor fetch), spins 60,000 cycles, then loads 64
// boxes through N stages. Values: the probe's upper median load time (N = 1) or N x its cycles /
// 64 (N > 1: its round trip per box), and the background's bytes per probe cycle x 100. A fresh
// simulator stands for silicon's L2 flush before every launch.
// Not as on silicon: the flag is read at once after each issue, where silicon's CTA waits for its
// ld.volatile before the next issue; the probe is CTA 0 on the model's first SM (silicon's ran on
// %smid 124 or 128); the %smid filters use UbenchJoinArrivals' numbering, silicon's below %smid 64
// only (so "spread" streams 16 SMs, silicon 17); the program's shared-background and pair modes
// have no twin.
#include <fmt/format.h>

#include <vector>

#include "bwsim/core/Error.hpp"
#include "bwsim/hw/sm/ChipLayout.hpp"
#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/sm/Sm.hpp"
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kBox = 16384, kBoxRows = 128, kBgBoxes = 1024, kProbeLoads = 64;
constexpr std::uint64_t kRegionRows = 1ull * kBgBoxes * kBoxRows;
constexpr std::uint32_t kStageBytes = 6 * 32768;  // 8 stages of 16 KiB or 6 of 32 KiB
constexpr std::uint32_t kSmem = kStageBytes + 2048;  // > half an SM's SMEM: one CTA per SM
constexpr Cycle kSpinCycles = 60000;

// Which background CTAs stream (silicon filters by %smid; here by silicon_smid, as
// UbenchJoinArrivals pairs its SMs).
enum class Filter { All, SmidLow, SmidSpread };

struct LoadedRun {
  std::uint32_t probe_stages = 1, bg_ctas = 0, bg_stages = 1;
  Cycle bg_spacing = 0;
  Filter filter = Filter::All;
  bool hot = false;                                  // the probe reloads its primed box (L2 hits)
  std::uint32_t probe_rows = kBoxRows;               // 128 (16 KiB) or 256 (32 KiB)
  std::uint64_t probe_row = 131 * kRegionRows;       // after the background regions
};

struct LoadedResult {
  double probe = 0;        // cycles: the upper median latency (N = 1) or the round trip per box
  double bg_per_cycle = 0; // the background's bytes per probe cycle
};

LoadedResult hbm_loaded(const HardwareConfig& c, const LoadedRun& r) {
  if (r.probe_stages * r.probe_rows * kUbenchRowBytes > kStageBytes)
    throw InputError(fmt::format("hbm_probe: {} boxes of {} rows do not fit the program's {} bytes of stages",
                                 r.probe_stages, r.probe_rows, kStageBytes));
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const ChipLayout layout = chip_layout(c);
  const std::uint64_t rows = 131 * kRegionRows + 257 * 256;
  const GmemAddr data = sim.gmem().alloc(rows * kUbenchRowBytes);
  const TensorMap bg_map = ubench_strided_map(data, kUbenchRowBytes, rows, kBoxRows, L2Promotion::B256);
  const TensorMap probe_map = ubench_strided_map(data, kUbenchRowBytes, rows, r.probe_rows, L2Promotion::B256);
  const std::uint32_t probe_box = r.probe_rows * kUbenchRowBytes;
  int flag = 0;  // 1: the probe is timing; 2: it is done
  std::uint64_t counted = 0;
  std::vector<Cycle> times(kProbeLoads);
  Cycle probe_cycles = 0;
  auto active = [&](std::uint32_t sm) {
    const std::uint32_t smid = silicon_smid(layout, sm);
    return r.filter == Filter::All || (r.filter == Filter::SmidLow && smid >= 1 && smid <= 16) ||
           (r.filter == Filter::SmidSpread && smid % 8 == 1);
  };
  sim.launch("ubench", LaunchConfig{.grid_ctas = 1 + r.bg_ctas, .block_threads = 32, .dynamic_smem_bytes = kSmem},
             [&](Warp& w) -> Task {
               const std::uint32_t base = 1024, bars = base + kStageBytes;
               auto bar = [&](std::uint32_t s) { return MBarrierRef{bars + 8 * s}; };
               if (w.cta_idx() != 0) {  // background
                 if (!active(w.cta().sm().index())) co_return;
                 const std::uint32_t S = r.bg_stages;
                 for (std::uint32_t s = 0; s < S; ++s) w.mbarrier_init(bar(s), 1);
                 w.fence_mbarrier_init();
                 const std::uint64_t first_row = (w.cta_idx() - 1) * kRegionRows;
                 int seen = 0;
                 Cycle last_issue = 0;
                 std::uint32_t k = 0;
                 for (;; ++k) {
                   const std::uint32_t s = k % S;
                   if (k >= S) {
                     co_await w.mbarrier_wait(bar(s), ((k - S) / S) & 1u);
                     if (seen == 1) ++counted;
                   }
                   if (seen == 2 || k >= kBgBoxes) break;
                   if (k > 0 && w.now() < last_issue + r.bg_spacing) co_await w.sleep(last_issue + r.bg_spacing - w.now());
                   last_issue = w.now();
                   w.mbarrier_arrive_expect_tx(bar(s), kBox);
                   w.tma_load(bg_map, SmemAddr{base + s * kBox}, bar(s),
                              {0, static_cast<std::int32_t>(first_row + 1ull * k * kBoxRows)});
                   seen = flag;
                 }
                 for (std::uint32_t j = k >= S ? k - S + 1 : 0; j < k; ++j)  // the boxes still in flight
                   co_await w.mbarrier_wait(bar(j % S), (j / S) & 1u);
                 co_return;
               }
               const std::uint32_t N = r.probe_stages;
               for (std::uint32_t s = 0; s < N; ++s) w.mbarrier_init(bar(s), 1);
               w.fence_mbarrier_init();
               auto load = [&](std::uint32_t s, std::uint64_t box) {
                 w.mbarrier_arrive_expect_tx(bar(s), probe_box);
                 w.tma_load(probe_map, SmemAddr{base + s * probe_box}, bar(s),
                            {0, static_cast<std::int32_t>(r.probe_row + box * r.probe_rows)});
               };
               load(0, 0);  // priming (the descriptor fetch), untimed: stage 0's phase 0
               co_await w.mbarrier_wait(bar(0), 0);
               co_await w.sleep(kSpinCycles);
               flag = 1;
               const Cycle t0 = w.now();
               // load i is box i + 1 (hot: box 0 again) into stage i % N; stage 0 has completed a phase
               auto phase_of = [&](std::uint32_t i) { return ((i / N) + (i % N == 0 ? 1u : 0u)) & 1u; };
               for (std::uint32_t i = 0; i < kProbeLoads + N; ++i) {
                 if (i >= N) {
                   const std::uint32_t j = i - N;
                   co_await w.mbarrier_wait(bar(j % N), phase_of(j));
                   if (N == 1) times[j] = w.now() - times[j];
                 }
                 if (i >= kProbeLoads) continue;
                 if (N == 1) times[i] = w.now();
                 load(i % N, r.hot ? 0 : i + 1);
               }
               probe_cycles = w.now() - t0;
               flag = 2;
             });
  LoadedResult out;
  if (r.probe_stages == 1) {
    out.probe = static_cast<double>(upper_median(times));
  } else {
    out.probe = static_cast<double>(r.probe_stages) * static_cast<double>(probe_cycles) / kProbeLoads;
  }
  out.bg_per_cycle = static_cast<double>(counted) * kBox / static_cast<double>(probe_cycles);
  return out;
}

// The rows' values of a run: the probe's cycles, and the background's bytes per cycle x 100.
std::int64_t probe_value(const LoadedResult& r) { return std::llround(r.probe); }
std::int64_t bg_value(const LoadedResult& r) { return std::llround(100 * r.bg_per_cycle); }

}  // namespace

std::vector<UbenchScenario> hbm_loaded_scenarios() {
  std::vector<UbenchScenario> all;
  // The probe alone with N boxes in flight (16 or 32 KiB, or at an offset into the buffer).
  auto alone = [&](const std::string& name, std::uint32_t probe_rows, std::uint64_t probe_row) {
    all.push_back({name, UbenchParam::BoxStages, [=](const HardwareConfig& c, std::uint32_t n) {
                     return probe_value(hbm_loaded(c, {.probe_stages = n, .probe_rows = probe_rows, .probe_row = probe_row}));
                   }});
  };
  alone("hbm_probe_round_alone", kBoxRows, 131 * kRegionRows);
  alone("hbm_probe_round_alone_box32k", 256, 131 * kRegionRows);
  for (const std::uint64_t mib : {0, 512, 1024, 1536})
    alone(fmt::format("hbm_probe_round_alone_at{}mib", mib), kBoxRows, (mib << 20) / kUbenchRowBytes);
  // The probe (cold, or hot: l2_probe) beside B background SMs of S stages, D cycles apart.
  auto beside = [&](const char* probe, std::uint32_t stages, Cycle spacing, bool hot) {
    for (const auto& [value, of] : {std::pair{"latency", &probe_value}, std::pair{"bg_bytes_per_cycle_x100", &bg_value}})
      all.push_back({fmt::format("{}_{}_s{}_d{}", probe, value, stages, spacing), UbenchParam::BackgroundCtas,
                     [=, of = of](const HardwareConfig& c, std::uint32_t b) {
                       return of(hbm_loaded(c, {.bg_ctas = b, .bg_stages = stages, .bg_spacing = spacing, .hot = hot}));
                     }});
  };
  for (const std::uint32_t s : {1u, 2u, 4u}) beside("hbm_probe", s, 0, false);
  for (const Cycle d : {1000, 2000, 4000, 8000, 16000}) beside("hbm_probe", 4, d, false);
  for (const std::uint32_t s : {1u, 2u, 4u}) beside("l2_probe", s, 0, true);
  // The probe's own N boxes in flight beside 131 background SMs of 4 stages, 4000 cycles apart.
  all.push_back({"hbm_probe_round_bg131_s4_d4000", UbenchParam::BoxStages, [](const HardwareConfig& c, std::uint32_t n) {
                   return probe_value(hbm_loaded(c, {.probe_stages = n, .bg_ctas = 131, .bg_stages = 4, .bg_spacing = 4000}));
                 }});
  // 131 background CTAs launched, only those on silicon's %smid 1..16 ("low") or %smid % 8 == 1
  // ("spread") streaming, with param S stages (the latency rows name it too).
  for (const auto& [filter, name] : {std::pair{Filter::SmidLow, "low"}, std::pair{Filter::SmidSpread, "spread"}}) {
    for (const std::uint32_t s : {2u, 4u})
      all.push_back({fmt::format("hbm_probe_latency_smid_{}_s{}", name, s), UbenchParam::BoxStages,
                     [filter = filter](const HardwareConfig& c, std::uint32_t stages) {
                       return probe_value(hbm_loaded(c, {.bg_ctas = 131, .bg_stages = stages, .filter = filter}));
                     }});
    all.push_back({fmt::format("hbm_probe_bg_bytes_per_cycle_x100_smid_{}", name), UbenchParam::BoxStages,
                   [filter = filter](const HardwareConfig& c, std::uint32_t stages) {
                     return bg_value(hbm_loaded(c, {.bg_ctas = 131, .bg_stages = stages, .filter = filter}));
                   }});
  }
  return all;
}

}  // namespace bwsim
