// A GEMM mainloop's memory side with a clock for the MMA, as bwsim programs: the stage ring of
// tools/calibration/h100_stage_ring.cu and its diagnostic variant h100_stage_parts.cu. G CTAs, one
// per SM, each step through 256 k-blocks of a 2- or 4-stage ring. A stage holds up to two parts:
// A (16 KiB from HBM: the CTA's own 128 rows, 32 KiB apart), A2 (the same from a second band of
// rows), B (32 KiB: 256 rows every CTA reads at the same k: L2-resident after the warm-up launch
// when read alone, evicted by the A stream beside it), B2 (B at k + 128), BH (B at k % 4: shared
// and hot) or BP (a private hot 32 KiB box, one of four cycled). "MMA" k starts once its stage is
// full and MMA k-1 has run 1024 cycles; its start frees stage (k-1) % S, refilled with k-block
// k-1+S. Both parts complete on one barrier (as a GEMM's full barrier) or each on its own; in
// h100_stage_parts.cu observer warps record when each barrier completes each phase. Without the
// clock (`gemm_loads_*`) it is h100_gemm_loads.cu on the same shape: each stage refilled as soon
// as it lands.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kSteps = 256, kMaxStages = 4, kMaxStageBytes = 49152;
constexpr std::uint64_t kWidth = 32768;  // K = 16384 bf16: 256 k-blocks of 128 B
constexpr Cycle kMma = 1024;             // a 128x256x64 bf16 wgmma k-block at 4096 FLOP per cycle

enum class Part { None, A, A2, B, B2, BH, BP };

constexpr std::uint32_t part_bytes(Part p) {
  return p == Part::None ? 0 : (p == Part::A || p == Part::A2) ? 16384 : 32768;
}

struct Variant {
  Part first, second = Part::None;
  std::uint32_t stages = 2;
  bool one_barrier = true, observed = false;
  // false: no MMA clock, a stage refilled as soon as it lands (h100_gemm_loads.cu's producer alone).
  bool clocked = true;
  // The barriers a stage completes on: one, or one per part.
  std::uint32_t waits() const { return (one_barrier || second == Part::None) ? 1 : 2; }
};

// The tensors a ring reads; `bp` only where a variant reads BP.
struct Operands {
  TensorMap a, b;
  std::optional<TensorMap> bp;
};

// What a launch shows: the median over CTAs of cycles per k-block, and (observed) the medians
// over CTAs and k-blocks 8..247 of barrier i's completion minus the stage's issue, even and odd
// k apart (with the 256B L2 promotion an odd k-block's A rows arrived with the even one's).
struct RingResult {
  std::int64_t per_kblock = 0;
  Cycle longest = 0;  // the longest CTA's span
  std::array<std::array<std::int64_t, 2>, 2> done{};
};

RingResult run_ring(Simulator& sim, const Operands& ops, std::uint32_t ctas, const Variant& v) {
  const std::uint32_t stage_bytes = part_bytes(v.first) + part_bytes(v.second);
  const std::uint32_t waits = v.waits();
  const LaunchConfig launch{.grid_ctas = ctas,
                            .block_threads = v.observed ? 96u : 32u,
                            .dynamic_smem_bytes = kMaxStages * kMaxStageBytes + 2048};
  struct Times {
    std::array<Cycle, kSteps> issue{};
    std::array<std::array<Cycle, kSteps>, 2> done{};
  };
  std::vector<Times> times(ctas);
  auto program = [&](Warp& w) -> Task {
    const std::uint32_t base = 1024, bars = base + kMaxStages * kMaxStageBytes;
    auto barrier = [&](std::uint32_t i, std::uint32_t s) { return MBarrierRef{bars + 8 * (i * kMaxStages + s)}; };
    Times& t = times[w.cta_idx()];
    auto load_part = [&](Part p, std::uint32_t dst, MBarrierRef bar, std::uint32_t k) {
      const auto x = static_cast<std::int32_t>(128 * k), band = static_cast<std::int32_t>(w.cta_idx());
      const SmemAddr to{dst};
      switch (p) {
        case Part::A: w.tma_load(ops.a, to, bar, {x, 128 * band}); break;
        case Part::A2: w.tma_load(ops.a, to, bar, {x, 128 * (132 + band)}); break;
        case Part::B: w.tma_load(ops.b, to, bar, {x, 0}); break;
        case Part::B2: w.tma_load(ops.b, to, bar, {static_cast<std::int32_t>(128 * ((k + 128) % kSteps)), 0}); break;
        case Part::BH: w.tma_load(ops.b, to, bar, {static_cast<std::int32_t>(128 * (k % 4)), 0}); break;
        case Part::BP:
          w.tma_load(*ops.bp, to, bar, {0, 256 * (4 * band + static_cast<std::int32_t>(k % 4))});
          break;
        case Part::None: break;
      }
    };
    auto issue = [&](std::uint32_t s, std::uint32_t k) {
      t.issue[k] = w.now();
      if (v.one_barrier) {
        w.mbarrier_arrive_expect_tx(barrier(0, s), stage_bytes);
      } else {
        w.mbarrier_arrive_expect_tx(barrier(0, s), part_bytes(v.first));
        if (v.second != Part::None) w.mbarrier_arrive_expect_tx(barrier(1, s), part_bytes(v.second));
      }
      const std::uint32_t dst = base + s * stage_bytes;
      load_part(v.first, dst, barrier(0, s), k);
      load_part(v.second, dst + part_bytes(v.first), barrier(v.one_barrier ? 0 : 1, s), k);
    };
    if (w.warp_idx() == 0) {
      for (std::uint32_t s = 0; s < v.stages; ++s) {
        w.mbarrier_init(barrier(0, s), 1);
        w.mbarrier_init(barrier(1, s), 1);
      }
      w.fence_mbarrier_init();
    }
    co_await w.syncthreads();
    if (w.warp_idx() >= 1) {  // observer: warp 1 + i records when barrier i completes each phase
      const std::uint32_t i = w.warp_idx() - 1;
      if (i >= waits) co_return;
      for (std::uint32_t k = 0; k < kSteps; ++k) {
        co_await w.mbarrier_wait(barrier(i, k % v.stages), (k / v.stages) & 1u);
        t.done[i][k] = w.now();
      }
      co_return;
    }
    for (std::uint32_t k = 0; k < v.stages; ++k) issue(k, k);
    if (!v.clocked) {
      for (std::uint32_t k = 0; k < kSteps; ++k) {
        for (std::uint32_t i = 0; i < waits; ++i) co_await w.mbarrier_wait(barrier(i, k % v.stages), (k / v.stages) & 1u);
        if (k + v.stages < kSteps) issue(k % v.stages, k + v.stages);
      }
      co_return;
    }
    Cycle mma_end = 0;
    for (std::uint32_t k = 0; k < kSteps; ++k) {
      for (std::uint32_t i = 0; i < waits; ++i) co_await w.mbarrier_wait(barrier(i, k % v.stages), (k / v.stages) & 1u);
      if (w.now() < mma_end) co_await w.sleep(mma_end - w.now());
      mma_end = w.now() + kMma;
      const std::uint32_t refill = k - 1 + v.stages;
      if (k >= 1 && refill < kSteps) issue((k - 1) % v.stages, refill);
    }
    if (w.now() < mma_end) co_await w.sleep(mma_end - w.now());
  };
  sim.launch("ubench", launch, program);  // warm-up: B into the L2
  times.assign(ctas, Times{});
  const RunResult r = sim.launch("ubench", launch, program);
  std::vector<Cycle> spans;
  for (const WarpSummary& s : r.warps)
    if (s.warp == 0) spans.push_back(s.finish - s.start);
  RingResult out{static_cast<std::int64_t>(upper_median(spans) / kSteps), *std::max_element(spans.begin(), spans.end()),
                 {}};
  if (!v.observed) return out;
  for (std::uint32_t i = 0; i < waits; ++i)
    for (std::uint32_t parity = 0; parity < 2; ++parity) {
      std::vector<Cycle> lat;
      for (const Times& t : times)
        for (std::uint32_t k = 8 + parity; k < kSteps - 8; k += 2) lat.push_back(t.done[i][k] - t.issue[k]);
      out.done[i][parity] = static_cast<std::int64_t>(upper_median(lat));
    }
  return out;
}

// h100_stage_ring.cu's (and h100_gemm_loads.cu's) operands: A of 128 rows per SM, one B tile.
Operands ring_operands(Simulator& sim, const HardwareConfig& c) {
  const std::uint64_t a_rows = static_cast<std::uint64_t>(c.sm.count) * 128, b_rows = 256;
  return Operands{
      ubench_strided_map(sim.gmem().alloc(kWidth * a_rows), kWidth, a_rows, 128, L2Promotion::B256),
      ubench_strided_map(sim.gmem().alloc(kWidth * b_rows), kWidth, b_rows, 256, L2Promotion::B256), std::nullopt};
}

// h100_stage_ring.cu (and, unclocked, h100_gemm_loads.cu): both parts on one barrier, no observers.
RingResult stage_ring(const HardwareConfig& c, std::uint32_t ctas, const Variant& v) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  return run_ring(sim, ring_operands(sim, c), ctas, v);
}

// h100_stage_parts.cu: its allocations (A of two bands of 132 CTAs, B, the private boxes).
RingResult stage_parts(const HardwareConfig& c, std::uint32_t ctas, const Variant& v) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const std::uint64_t a_rows = 2ull * 132 * 128, b_rows = 256, bp_rows = 132ull * 4 * 256;
  const TensorMap a = ubench_strided_map(sim.gmem().alloc(kWidth * a_rows), kWidth, a_rows, 128, L2Promotion::B256);
  const TensorMap b = ubench_strided_map(sim.gmem().alloc(kWidth * b_rows), kWidth, b_rows, 256, L2Promotion::B256);
  const TensorMap bp = ubench_strided_map(sim.gmem().alloc(128 * bp_rows), 128, bp_rows, 256, L2Promotion::B256);
  return run_ring(sim, Operands{a, b, bp}, ctas, v);
}

}  // namespace

std::vector<UbenchScenario> stage_ring_scenarios() {
  std::vector<UbenchScenario> all;
  const std::pair<Variant, const char*> rings[] = {
      {{Part::A}, "a"}, {{Part::B}, "b"}, {{Part::A, Part::B}, "ab"}};
  for (const auto& [ring, name] : rings) {
    for (std::uint32_t stages : {2u, 4u}) {
      Variant v = ring;
      v.stages = stages;
      all.push_back({fmt::format("stage_ring_{}_s{}_cycles_per_kblock", name, stages), UbenchParam::Ctas,
                     [v](const HardwareConfig& c, std::uint32_t ctas) { return stage_ring(c, ctas, v).per_kblock; }});
    }
  }
  // h100_gemm_loads.cu on the scaling series' shape (run_loads_scaling.sh): the producer alone,
  // its longest CTA's span in cycles.
  for (const auto& [ring, name] : rings)
    for (std::uint32_t stages : {2u, 4u}) {
      Variant v = ring;
      v.stages = stages;
      v.clocked = false;
      all.push_back({fmt::format("gemm_loads_{}_s{}_cycles", name, stages), UbenchParam::Ctas,
                     [v](const HardwareConfig& c, std::uint32_t ctas) {
                       return static_cast<std::int64_t>(stage_ring(c, ctas, v).longest);
                     }});
    }
  // h100_stage_parts.cu's variants: parts in issue order; "1": one barrier; "_quiet": no
  // observers; "4": 4 stages; "h": the hot shared BH in place of B.
  const std::pair<Variant, const char*> parts[] = {
      {{Part::A, Part::B, 2, false, true}, "ab"},     {{Part::A, Part::B, 2, false, false}, "ab_quiet"},
      {{Part::A, Part::B, 2, true, true}, "ab1"},     {{Part::A, Part::B, 2, true, false}, "ab1_quiet"},
      {{Part::B, Part::A, 2, false, true}, "ba"},     {{Part::B, Part::A, 2, true, true}, "ba1"},
      {{Part::A, Part::A2, 2, false, true}, "aa"},    {{Part::A, Part::A2, 2, true, true}, "aa1"},
      {{Part::B, Part::B2, 2, false, true}, "bb"},    {{Part::B, Part::B2, 2, true, true}, "bb1"},
      {{Part::A, Part::BP, 2, false, true}, "abp"},   {{Part::A, Part::BP, 2, true, true}, "abp1"},
      {{Part::A, Part::None, 2, false, true}, "a"},   {{Part::B, Part::None, 2, false, true}, "b"},
      {{Part::A, Part::B, 4, false, true}, "ab4"},    {{Part::A, Part::B, 4, true, true}, "ab14"},
      {{Part::A, Part::BH, 2, false, true}, "abh"},   {{Part::A, Part::BH, 2, true, true}, "abh1"},
      {{Part::BH, Part::A, 2, false, true}, "bha"}};
  // The twin charges no time for the program's own arithmetic, so it stands for both loops of
  // h100_stage_parts.cu: the one first measured (stage and phase by run-time division) and the
  // `lean` one (counted), whose rows are named stage_parts_lean_<v>_....
  for (const char* prefix : {"stage_parts", "stage_parts_lean"})
    for (const auto& [v, name] : parts) {
      all.push_back({fmt::format("{}_{}_cycles_per_kblock", prefix, name), UbenchParam::Ctas,
                     [v](const HardwareConfig& c, std::uint32_t ctas) { return stage_parts(c, ctas, v).per_kblock; }});
      if (!v.observed) continue;
      for (std::uint32_t i = 0; i < v.waits(); ++i)
        for (std::uint32_t parity = 0; parity < 2; ++parity)
          all.push_back({fmt::format("{}_{}_bar{}_{}_latency", prefix, name, i, parity ? "odd" : "even"),
                         UbenchParam::Ctas, [v, i, parity](const HardwareConfig& c, std::uint32_t ctas) {
                           return stage_parts(c, ctas, v).done[i][parity];
                         }});
    }
  return all;
}

}  // namespace bwsim
