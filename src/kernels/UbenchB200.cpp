// The SemiAnalysis B200 microbenchmarks (github.com/SemiAnalysisAI/microbench-blackwell) as bwsim
// programs, so that tools/calibration/b200_published.csv compares one for one with b200.yaml:
// - umma_latency/umma_lat.cu: one tcgen05.mma (bf16, K = 16) issued by warp 0's elected thread of
//   a 128-thread CTA (or of CTA 0 of a 2-CTA cluster), then tcgen05.commit to an mbarrier
//   (multicast to both CTAs of a pair); all threads wait on its parity; clock64 around it, on the
//   issuing thread. The median of 100 samples there; here the model is deterministic, so one
//   sample after 8 warm-up ones.
// - tma2d_throughput/tma2d_tput.cu: one CTA of one warp per SM on every SM; fp32 rows of 128
//   elements (512 B), box {128, H}, no swizzle, no L2 promotion; thread 0 fills its `stages`
//   buffers, then waits for the oldest, re-arms it and issues the next box; CTA b reads rows
//   b*H + k*148*H (every byte once, from HBM). Its value is ncu's cycles per TMA operation of an
//   SM times the stages: the round trip of one load at that load. SA read every byte of a 2 GiB
//   buffer (110 .. 28339 loads per SM); here 128 loads per SM (or fewer when SA did), which
//   includes the same start-up once.
// - tma2dmcast_throughput/tma2dmcast_sweep_results.csv (program tma2dmcast_tput.cu): 4 warps per
//   CTA, one CTA per SM; in every iteration
//   each warp loads one fp32 box {128, H} into its own buffer and waits for it, then the cluster
//   syncs (barrier.cluster arrive + wait, default semantics). Modes: implicit_l2_intra (the CTAs
//   of a cluster of C read the same rows), explicit_mcast (rank 0 multicasts them to the C
//   CTAs), no_sharing (each CTA its own rows), implicit_l2_cross (no cluster; S consecutive CTAs
//   read the same rows). The value is ncu's SM cycles of the whole 2 GiB run over its iterations
//   (442 .. 16384 of them): the cycles of one iteration, including any second wave of CTAs (148
//   CTAs in clusters of 4 fit 34 clusters at once, so 3 run after the rest). Here 32 iterations,
//   the kernel's cycles less the launch latency over them (the first iteration's cold descriptor
//   fetch and start, 1-2% of the run, stays in).
// SA's runs had no clock lock; their counters put the SM at 1.964-1.968 GHz, so these programs
// run at 1.965 GHz (cycles compare, and the memory rates in GB/s are worth fewer cycles there).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr double kSaClockGhz = 1.965;

HardwareConfig at_sa_clock(const HardwareConfig& c) {
  HardwareConfig at = c;
  at.clock_ghz = kSaClockGhz;
  return at;
}

// K-major, no swizzle, in core matrices (8 rows x 16 B; LBO 128, SBO 256): A of M = 128 takes
// 4 KiB, B of N = 256 8 KiB.
SmemDescriptor operand_desc(std::uint32_t base) {
  return encode(SmemDescriptorFields{.start_address = base, .leading_byte_offset = 128, .stride_byte_offset = 256});
}

// Cycles of one MMA, issue -> commit -> the wait returns, on the issuing thread.
std::int64_t umma_latency(const HardwareConfig& c, bool ts, std::uint32_t cta_group, std::uint32_t m, std::uint32_t n) {
  constexpr std::uint32_t kSamples = 9;  // the last one counts
  const HardwareConfig at = at_sa_clock(c);  // the simulator keeps a reference
  Simulator sim(at, SimOptions{.mode = Mode::Timing});
  const MBarrierRef bar{0};
  const SmemAddr slot{16};
  Cycle elapsed = 0;
  auto program = [&](Warp& w) -> Task {
    TmemAddr d{};
    if (w.warp_idx() == 0) {  // warp 0 allocates (both CTAs of a pair: the same columns) and issues
      d = co_await w.tcgen05_alloc(slot, 512, cta_group);
      w.mbarrier_init(bar, 1);
      w.fence_mbarrier_init();  // the pair's commit arrives on both CTAs' barriers
    }
    if (cta_group == 2) {
      w.cluster_arrive_relaxed();
      co_await w.cluster_wait();
    } else {
      co_await w.syncthreads();
    }
    const InstrDescriptor idesc = encode(MmaKind::F16, {.a_type = DataType::BF16, .b_type = DataType::BF16, .m = m, .n = n});
    const bool issuer = w.warp_idx() == 0 && w.cluster_ctarank() == 0;
    for (std::uint32_t i = 0; i < kSamples; ++i) {
      const Cycle t0 = w.now();
      if (issuer) {
        if (ts) w.tcgen05_mma(MmaKind::F16, d, d + 256, operand_desc(8192), idesc, false, cta_group);
        else w.tcgen05_mma(MmaKind::F16, d, operand_desc(1024), operand_desc(8192), idesc, false, cta_group);
        w.tcgen05_commit(bar, cta_group == 2 ? 0b11 : 0);
      }
      co_await w.mbarrier_wait(bar, i & 1u);
      if (issuer) elapsed = w.now() - t0;
    }
    if (cta_group == 2) {
      w.cluster_arrive_relaxed();
      co_await w.cluster_wait();
    } else {
      co_await w.syncthreads();
    }
    if (w.warp_idx() == 0) w.tcgen05_dealloc(d, 512, cta_group);
  };
  sim.launch("ubench",
             LaunchConfig{.grid_ctas = cta_group, .block_threads = 128, .dynamic_smem_bytes = 65536,
                          .cluster = {cta_group, 1, 1}},
             program);
  return static_cast<std::int64_t>(elapsed);
}

// The round trip of one TMA load (stages x cycles between an SM's loads) with every SM streaming
// boxes of `box_bytes` from HBM through `stages` buffers.
std::int64_t tma2d_round_trip(const HardwareConfig& c, std::uint32_t stages, std::uint32_t box_bytes) {
  constexpr std::uint32_t kRowElems = 128, kRowBytes = 4 * kRowElems;
  constexpr std::uint64_t kSaBufferBytes = 2ull << 30;
  const HardwareConfig at = at_sa_clock(c);  // the simulator keeps a reference
  Simulator sim(at, SimOptions{.mode = Mode::Timing});
  const std::uint32_t sms = c.sm.count, h = box_bytes / kRowBytes;
  const auto loads = static_cast<std::uint32_t>(std::min<std::uint64_t>(128, kSaBufferBytes / sms / box_bytes));
  const std::uint64_t rows = static_cast<std::uint64_t>(sms) * h * loads;
  const TensorMap map = TensorMap::tiled({.dtype = DataType::F32, .address = sim.gmem().alloc(rows * kRowBytes),
                                          .dims = {kRowElems, rows}, .strides = {kRowBytes}, .box = {kRowElems, h}});
  const StagedLoads staged{map, 1024, box_bytes, stages};
  const RunResult r = sim.launch(
      "ubench", LaunchConfig{.grid_ctas = sms, .block_threads = 32, .dynamic_smem_bytes = 204800},  // one CTA per SM
      [&](Warp& w) -> Task {
        staged.init_barriers(w);
        co_await staged.run(w, loads, [&](std::uint32_t k) {
          const std::uint64_t row = static_cast<std::uint64_t>(w.cta_idx()) * h + static_cast<std::uint64_t>(k) * sms * h;
          return TensorCoords{0, static_cast<std::int32_t>(row)};
        });
      });
  double cycles = 0;
  for (const WarpSummary& s : r.warps) cycles += static_cast<double>(s.finish - s.start);
  cycles /= static_cast<double>(r.warps.size());
  return static_cast<std::int64_t>(stages * cycles / loads + 0.5);
}

enum class McastMode : std::uint8_t { ImplicitIntra, ExplicitMcast, NoSharing, ImplicitCross };

// Cycles of one iteration of tma2dmcast_tput.cu's loop (mode, cluster size `cluster`, sharing
// group `group` for ImplicitCross), tiles of `tile_bytes`.
std::int64_t tma2dmcast_iteration(const HardwareConfig& c, McastMode mode, std::uint32_t cluster, std::uint32_t group,
                                  std::uint32_t tile_bytes) {
  constexpr std::uint32_t kRowElems = 128, kRowBytes = 4 * kRowElems, kWarps = 4, kIterations = 32;
  const HardwareConfig at = at_sa_clock(c);  // the simulator keeps a reference
  Simulator sim(at, SimOptions{.mode = Mode::Timing});
  const std::uint32_t h = tile_bytes / kRowBytes, sharing = mode == McastMode::ImplicitCross ? group : cluster;
  const std::uint32_t ctas = c.sm.count / sharing * sharing, groups = ctas / sharing;
  // Rows a group reads per iteration; an iteration strides over all groups' rows. (The repo's HEAD
  // source strides modes 0/1 by every CTA instead; the published runs did not: their TMA
  // instruction counts, 4 x CTAs x 2 GiB / (group_rows x groups x 512 B), show the groups.)
  const std::uint64_t group_rows = std::uint64_t{kWarps} * h * (mode == McastMode::NoSharing ? cluster : 1);
  const std::uint64_t rows = group_rows * groups * kIterations;
  const TensorMap map = TensorMap::tiled({.dtype = DataType::F32, .address = sim.gmem().alloc(rows * kRowBytes),
                                          .dims = {kRowElems, rows}, .strides = {kRowBytes}, .box = {kRowElems, h}});
  // SA pins the dynamic SMEM at the 227 KiB maximum: one CTA per SM at any tile size.
  const LaunchConfig launch{.grid_ctas = ctas, .block_threads = 32 * kWarps,
                            .dynamic_smem_bytes = c.sm.max_smem_per_cta, .cluster = {cluster, 1, 1}};
  const RunResult r = sim.launch("ubench", launch, [&](Warp& w) -> Task {
    const std::uint32_t warp = w.warp_idx(), rank = w.cluster_ctarank();
    const MBarrierRef bar{kWarps * tile_bytes + 8 * warp};
    w.mbarrier_init(bar, 1);
    co_await w.syncthreads();
    w.fence_mbarrier_init();
    w.cluster_arrive();
    co_await w.cluster_wait();
    const std::uint64_t my_group = w.cta_idx() / sharing;
    for (std::uint32_t it = 0; it < kIterations; ++it) {
      const std::uint64_t base = group_rows * my_group + it * group_rows * groups +
                                 (mode == McastMode::NoSharing ? std::uint64_t{rank} * kWarps * h : 0);
      const TensorCoords coords{0, static_cast<std::int32_t>(base + warp * h)};
      w.mbarrier_arrive_expect_tx(bar, tile_bytes);
      if (mode != McastMode::ExplicitMcast)
        w.tma_load(map, SmemAddr{warp * tile_bytes}, bar, coords);
      else if (rank == 0)
        w.tma_load(map, SmemAddr{warp * tile_bytes}, bar, coords,
                   TmaLoadFlags{.multicast_mask = static_cast<std::uint16_t>((1u << cluster) - 1)});
      co_await w.mbarrier_wait(bar, it & 1u);
      w.cluster_arrive();
      co_await w.cluster_wait();
    }
  });
  return static_cast<std::int64_t>(static_cast<double>(r.cycles - c.launch.latency) / kIterations + 0.5);
}

UbenchScenario tma2dmcast(McastMode mode, std::uint32_t cluster, std::uint32_t group) {
  static constexpr const char* kNames[] = {"implicit_l2_intra", "explicit_mcast", "no_sharing", "implicit_l2_cross"};
  return {fmt::format("sa_tma2dmcast_{}_c{}_g{}", kNames[static_cast<int>(mode)], cluster, group),
          UbenchParam::SaTileBytes, [mode, cluster, group](const HardwareConfig& c, std::uint32_t tile) {
            return tma2dmcast_iteration(c, mode, cluster, group, tile);
          }};
}

UbenchScenario umma(bool ts, std::uint32_t cta_group, std::uint32_t m) {
  return {fmt::format("sa_umma_latency_bf16_{}_{}cta_m{}", ts ? "ts" : "ss", cta_group, m), UbenchParam::UmmaN,
          [ts, cta_group, m](const HardwareConfig& c, std::uint32_t n) { return umma_latency(c, ts, cta_group, m, n); }};
}

}  // namespace

std::vector<UbenchScenario> b200_published_scenarios() {
  std::vector<UbenchScenario> all;
  for (const bool ts : {false, true}) {
    all.push_back(umma(ts, 1, 64));
    all.push_back(umma(ts, 1, 128));
    all.push_back(umma(ts, 2, 128));
    all.push_back(umma(ts, 2, 256));
  }
  for (const std::uint32_t stages : {1u, 2u, 4u})
    all.push_back({fmt::format("sa_tma2d_round_trip_s{}", stages), UbenchParam::SaBoxBytes,
                   [stages](const HardwareConfig& c, std::uint32_t box) { return tma2d_round_trip(c, stages, box); }});
  all.push_back(tma2dmcast(McastMode::ImplicitIntra, 1, 1));
  for (const std::uint32_t cl : {2u, 4u}) {
    all.push_back(tma2dmcast(McastMode::ImplicitIntra, cl, cl));
    all.push_back(tma2dmcast(McastMode::ExplicitMcast, cl, cl));
    all.push_back(tma2dmcast(McastMode::NoSharing, cl, cl));
  }
  for (const std::uint32_t g : {2u, 4u, 8u, 16u, 32u}) all.push_back(tma2dmcast(McastMode::ImplicitCross, 1, g));
  return all;
}

}  // namespace bwsim
