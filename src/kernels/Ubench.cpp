#include "bwsim/kernels/Ubench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <cmath>
#include <map>
#include <sstream>

#include "bwsim/core/Csv.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kIters = 1000, kWarmup = 8;  // h100_ubench.cu: kIters, first 8 discarded
constexpr std::uint32_t kRowBytes = kUbenchRowBytes;
constexpr std::uint32_t kL2Rows = 64 * 1024;           // the 8 MiB L2-resident buffer
constexpr std::uint32_t kHbmRows = 16u * 1024 * 1024;  // the 2 GiB HBM buffer

RunResult launch(Simulator& sim, std::uint32_t ctas, std::uint32_t threads, std::uint32_t smem,
                 std::uint32_t cluster, const WarpProgram& program) {
  return sim.launch("ubench",
                    LaunchConfig{.grid_ctas = ctas, .block_threads = threads, .dynamic_smem_bytes = smem,
                                 .cluster = {cluster, 1, 1}, .non_portable_cluster = cluster > 8},
                    program);
}

Simulator timing_sim(const HardwareConfig& c) { return Simulator(c, SimOptions{.mode = Mode::Timing}); }

// 1. arrive + try_wait.parity by one thread on a count-1 barrier.
std::int64_t mbarrier_same_thread(const HardwareConfig& c, std::uint32_t) {
  Simulator sim = timing_sim(c);
  Cycle t0 = 0, t1 = 0;
  launch(sim, 1, 32, 64, 1, [&](Warp& w) -> Task {
    w.mbarrier_init(MBarrierRef{0}, 1);
    for (std::uint32_t i = 0; i < kIters + kWarmup; ++i) {
      if (i == kWarmup) t0 = w.now();
      w.mbarrier_arrive(MBarrierRef{0});
      co_await w.mbarrier_wait(MBarrierRef{0}, i & 1u);
    }
    t1 = w.now();
  });
  return static_cast<std::int64_t>((t1 - t0) / kIters);
}

// 2. warp 0 -> warp 1 -> warp 0 through two barriers; one way = round trip / 2.
std::int64_t mbarrier_cross_warp(const HardwareConfig& c, std::uint32_t) {
  Simulator sim = timing_sim(c);
  Cycle t0 = 0, t1 = 0;
  launch(sim, 1, 64, 64, 1, [&](Warp& w) -> Task {
    const MBarrierRef a{0}, b{8};
    if (w.warp_idx() == 0) {
      w.mbarrier_init(a, 1);
      w.mbarrier_init(b, 1);
    }
    co_await w.syncthreads();
    for (std::uint32_t i = 0; i < kIters + kWarmup; ++i) {
      if (w.warp_idx() == 0) {
        if (i == kWarmup) t0 = w.now();
        w.mbarrier_arrive(a);
        co_await w.mbarrier_wait(b, i & 1u);
      } else {
        co_await w.mbarrier_wait(a, i & 1u);
        w.mbarrier_arrive(b);
      }
    }
    if (w.warp_idx() == 0) t1 = w.now();
  });
  return static_cast<std::int64_t>((t1 - t0) / kIters / 2);
}

// A cluster-wide barrier.cluster.arrive (release) + wait, as cluster_sync_all().
Task cluster_sync(Warp& w) {
  w.cluster_arrive();
  co_await w.cluster_wait();
}

// 3. rank 0 <-> last rank ping-pong with remote arrives; one way = round trip / 2.
std::int64_t remote_arrive(const HardwareConfig& c, std::uint32_t cluster) {
  Simulator sim = timing_sim(c);
  Cycle t0 = 0, t1 = 0;
  launch(sim, cluster, 32, 64, cluster, [&](Warp& w) -> Task {
    const MBarrierRef b{0};
    const std::uint32_t rank = w.cluster_ctarank(), last = cluster - 1;
    w.mbarrier_init(b, 1);
    w.fence_mbarrier_init();
    co_await cluster_sync(w);
    if (rank == 0 || rank == last) {
      const ClusterBarrierRef other = w.mapa(b, rank == 0 ? last : 0);
      for (std::uint32_t i = 0; i < kIters + kWarmup; ++i) {
        if (rank == 0) {
          if (i == kWarmup) t0 = w.now();
          w.mbarrier_arrive(other);
          co_await w.mbarrier_wait(b, i & 1u);
        } else {
          co_await w.mbarrier_wait(b, i & 1u);
          w.mbarrier_arrive(other);
        }
      }
      if (rank == 0) t1 = w.now();
    }
    co_await cluster_sync(w);
  });
  return static_cast<std::int64_t>((t1 - t0) / kIters / 2);
}

// 4. dependent ld.shared::cluster chain through the last rank's SMEM.
std::int64_t dsmem_chain(const HardwareConfig& c, std::uint32_t cluster) {
  Simulator sim = timing_sim(c);
  Cycle t0 = 0, t1 = 0;
  launch(sim, cluster, 32, 1024, cluster, [&](Warp& w) -> Task {
    co_await cluster_sync(w);
    if (w.cluster_ctarank() == 0) {
      const ClusterSmemAddr base = w.mapa(SmemAddr{0}, cluster - 1);
      std::uint32_t value = 0;
      for (std::uint32_t i = 0; i < kIters + kWarmup; ++i) {
        if (i == kWarmup) t0 = w.now();
        w.ld_shared_cluster(base, std::as_writable_bytes(std::span(&value, 1)));
      }
      t1 = w.now();
    }
    co_await cluster_sync(w);
  });
  return static_cast<std::int64_t>((t1 - t0) / kIters);
}

// 5. barrier.cluster arrive + wait, relaxed or release/acquire.
template <bool kRelaxed>
std::int64_t cluster_barrier(const HardwareConfig& c, std::uint32_t cluster) {
  Simulator sim = timing_sim(c);
  Cycle t0 = 0, t1 = 0;
  launch(sim, cluster, 32, 64, cluster, [&](Warp& w) -> Task {
    for (std::uint32_t i = 0; i < kIters + kWarmup; ++i) {
      if (i == kWarmup && w.cluster_ctarank() == 0) t0 = w.now();
      if (kRelaxed)
        w.cluster_arrive_relaxed();
      else
        w.cluster_arrive();
      co_await w.cluster_wait();
    }
    if (w.cluster_ctarank() == 0) t1 = w.now();
  });
  return static_cast<std::int64_t>((t1 - t0) / kIters);
}

// 6/7. TMA 2D load latency of one box: from the L2 (the same box every time, the first eight
// loads warming it), or from HBM (row_step > 0: every load from rows never read), optionally
// multicast to every CTA of the cluster with a cluster barrier between loads.
std::int64_t tma_latency(const HardwareConfig& c, std::uint32_t box_bytes, std::uint32_t cluster, bool multicast,
                         bool hbm) {
  Simulator sim = timing_sim(c);
  const std::uint32_t rows = hbm ? kHbmRows : kL2Rows, box_rows = box_bytes / kRowBytes;
  const TensorMap map = ubench_box_map(sim.gmem().alloc(static_cast<std::uint64_t>(rows) * kRowBytes), rows, box_rows);
  const std::uint32_t row_step = hbm ? 64 * box_rows : 0;
  constexpr std::uint32_t kTmaIters = 40;
  Cycle total = 0;
  launch(sim, cluster, 32, 1024 + box_bytes + 64, cluster, [&](Warp& w) -> Task {
    const SmemAddr dst{1024};
    const MBarrierRef b{1024 + box_bytes};
    w.mbarrier_init(b, 1);
    w.fence_mbarrier_init();
    if (cluster > 1) co_await cluster_sync(w);
    for (std::uint32_t i = 0; i < kTmaIters + kWarmup; ++i) {
      const Cycle t0 = w.now();
      w.mbarrier_arrive_expect_tx(b, box_bytes);
      const auto row = static_cast<std::int32_t>(i * row_step);
      if (w.cluster_ctarank() == 0)
        w.tma_load(map, dst, b, {0, row},
                   TmaLoadFlags{.multicast_mask = static_cast<std::uint16_t>(multicast ? (1u << cluster) - 1 : 0)});
      co_await w.mbarrier_wait(b, i & 1u);
      if (i >= kWarmup && w.cluster_ctarank() == 0) total += w.now() - t0;
      if (cluster > 1) co_await cluster_sync(w);
    }
  });
  return static_cast<std::int64_t>(total / kTmaIters);
}

// 8/9. TMA streaming: `ctas` CTAs each keep `stages` 32 KiB boxes in flight over its own region of
// `region_rows` rows (with `shared_regions` > 0, CTA i reads region i mod shared_regions: the
// CTAs read the same boxes in step); a warm-up launch first (as the hardware run warms the L2),
// then the timed one. Aggregate bytes per cycle x 100 from the first CTA start to the last CTA end
// (the hardware brackets the grid with %globaltimer); `skip` first loads per CTA are not counted
// (the one-SM stream starts its clock after four completions).
std::int64_t tma_stream(const HardwareConfig& c, std::uint32_t ctas, std::uint32_t stages, std::uint32_t loads,
                        std::uint32_t region_rows, std::uint32_t buffer_rows, std::uint32_t warmup_loads,
                        std::uint32_t skip, std::uint32_t shared_regions = 0, std::uint32_t first_box_step = 0) {
  Simulator sim = timing_sim(c);
  constexpr std::uint32_t kBox = 32768, kBoxRows = kBox / kRowBytes;
  const TensorMap map = ubench_box_map(sim.gmem().alloc(static_cast<std::uint64_t>(buffer_rows) * kRowBytes), buffer_rows,
                                kBoxRows);
  Cycle skipped_at = 0;
  const StagedLoads staged{map, 1024, kBox, stages};
  auto program = [&](std::uint32_t n) {
    return [&, n](Warp& w) -> Task {
      staged.init_barriers(w);
      const std::uint32_t first = (shared_regions ? w.cta_idx() % shared_regions : w.cta_idx()) * region_rows;
      const std::uint32_t first_box = w.cta_idx() * first_box_step;
      co_await staged.run(w, n, [&](std::uint32_t i) {
        if (skip && i == skip && w.cta_idx() == 0) skipped_at = w.now();
        return TensorCoords{0, static_cast<std::int32_t>(first + ((first_box + i) * kBoxRows) % region_rows)};
      });
    };
  };
  const std::uint32_t smem = staged.smem_bytes();
  if (warmup_loads) launch(sim, ctas, 32, smem, 1, program(warmup_loads));
  const WarpSpan span = warp_span(launch(sim, ctas, 32, smem, 1, program(loads)));
  const Cycle begin = skip ? skipped_at : span.begin;
  const double bytes = static_cast<double>(ctas) * (loads - skip) * kBox;
  return static_cast<std::int64_t>(bytes / static_cast<double>(span.end - begin) * 100);
}

// 11. A fresh launch's first TMA load (a 16 KiB box), from the thread's first instruction (its
// mbarrier init and fence included) to completion, or (`next`) the load of another box right
// after in the same launch; the box is L2-resident from a warm-up launch.
std::int64_t tma_first_load(const HardwareConfig& c, std::uint32_t box_bytes, bool next) {
  Simulator sim = timing_sim(c);
  const std::uint32_t box_rows = box_bytes / kRowBytes;
  const TensorMap map = ubench_box_map(sim.gmem().alloc(static_cast<std::uint64_t>(kL2Rows) * kRowBytes), kL2Rows, box_rows);
  Cycle first = 0, second = 0;
  auto program = [&](Warp& w) -> Task {
    const Cycle t0 = w.now();
    const SmemAddr dst{1024};
    const MBarrierRef b{1024 + box_bytes};
    w.mbarrier_init(b, 1);
    w.fence_mbarrier_init();
    w.mbarrier_arrive_expect_tx(b, box_bytes);
    w.tma_load(map, dst, b, {0, 0});
    co_await w.mbarrier_wait(b, 0);
    first = w.now() - t0;
    const Cycle t1 = w.now();
    w.mbarrier_arrive_expect_tx(b, box_bytes);
    w.tma_load(map, dst, b, {0, 1024});
    co_await w.mbarrier_wait(b, 1);
    second = w.now() - t1;
  };
  for (int i = 0; i < 2; ++i) launch(sim, 1, 32, 1024 + box_bytes + 64, 1, program);
  return static_cast<std::int64_t>(next ? second : first);
}

// 12. TMA store of a 64 x 64 bf16 box (8 KiB, 128B swizzle) to an L2-resident destination: store,
// commit_group, wait_group 0 (or wait_group.read 0), 100 timed iterations after 8.
std::int64_t tma_store_latency(const HardwareConfig& c, std::uint32_t box_bytes, bool read) {
  Simulator sim = timing_sim(c);
  const std::uint32_t cols = 64, rows = box_bytes / (2 * cols);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::BF16, .address = sim.gmem().alloc(box_bytes),
                                          .dims = {cols, rows}, .strides = {2 * cols}, .box = {cols, rows},
                                          .swizzle = Swizzle::B128});
  constexpr std::uint32_t kStores = 100;
  Cycle total = 0;
  launch(sim, 1, 32, 1024 + box_bytes, 1, [&](Warp& w) -> Task {
    const SmemAddr src{1024};
    w.st_shared(src, std::vector<std::byte>(box_bytes));
    w.fence_proxy_async();
    for (std::uint32_t i = 0; i < kStores + kWarmup; ++i) {
      const Cycle t0 = w.now();
      w.tma_store(map, src, {0, 0});
      w.bulk_commit_group();
      if (read) co_await w.bulk_wait_group_read(0);
      else co_await w.bulk_wait_group(0);
      if (i >= kWarmup) total += w.now() - t0;
    }
  });
  return static_cast<std::int64_t>((total + kStores / 2) / kStores);
}

// 10. One empty kernel: the launch to its end (what back-to-back kernels of a graph pay each).
std::int64_t kernel_launch_gap(const HardwareConfig& c, std::uint32_t) {
  Simulator sim = timing_sim(c);
  return static_cast<std::int64_t>(launch(sim, 1, 32, 0, 1, [](Warp&) -> Task { co_return; }).cycles);
}

std::vector<UbenchScenario> make_scenarios() {
  std::vector<UbenchScenario> all{
      {"kernel_launch_gap", UbenchParam::Ignored, &kernel_launch_gap},
      {"mbarrier_same_thread", UbenchParam::Ignored, &mbarrier_same_thread},
      {"mbarrier_cross_warp_one_way", UbenchParam::Ignored, &mbarrier_cross_warp},
      {"remote_arrive_one_way", UbenchParam::ClusterSize, &remote_arrive},
      {"dsmem_load_chain", UbenchParam::ClusterSize, &dsmem_chain},
      {"cluster_barrier_relaxed", UbenchParam::ClusterSize, &cluster_barrier<true>},
      {"cluster_barrier_release", UbenchParam::ClusterSize, &cluster_barrier<false>},
      {"tma_2d_latency_l2", UbenchParam::BoxBytes,
       [](const HardwareConfig& c, std::uint32_t box) { return tma_latency(c, box, 1, false, false); }},
      {"tma_2d_latency_l2_plain_launch", UbenchParam::BoxBytes,
       [](const HardwareConfig& c, std::uint32_t box) { return tma_latency(c, box, 1, false, false); }},
      {"tma_2d_latency_hbm", UbenchParam::BoxBytes,
       [](const HardwareConfig& c, std::uint32_t box) { return tma_latency(c, box, 1, false, true); }},
      {"tma_2d_multicast_latency_16k", UbenchParam::ClusterSize,
       [](const HardwareConfig& c, std::uint32_t cluster) { return tma_latency(c, 16384, cluster, true, false); }},
      {"tma_stream_one_sm_bytes_per_cycle_x100", UbenchParam::Ignored,
       [](const HardwareConfig& c, std::uint32_t) { return tma_stream(c, 1, 4, 256, kL2Rows, kL2Rows, 256, 4); }},
      {"tma_stream_one_sm_hbm_bytes_per_cycle_x100", UbenchParam::Ignored,
       [](const HardwareConfig& c, std::uint32_t) { return tma_stream(c, 1, 4, 2048, kHbmRows, kHbmRows, 0, 0); }},
      {"tma_stream_all_sms_l2_bytes_per_cycle_x100", UbenchParam::InFlight,
       [](const HardwareConfig& c, std::uint32_t in_flight) {
         return tma_stream(c, c.sm.count, in_flight / 32768, 512, 2048, 2048 * c.sm.count, 8, 0);
       }},
      {"tma_stream_all_sms_l2_shared_bytes_per_cycle_x100", UbenchParam::InFlight,
       [](const HardwareConfig& c, std::uint32_t in_flight) {
         return tma_stream(c, c.sm.count, in_flight / 32768, 512, 2048, 2048, 8, 0, 1);
       }},
      {"tma_stream_all_sms_l2_shared_offset_bytes_per_cycle_x100", UbenchParam::BoxStep,
       [](const HardwareConfig& c, std::uint32_t step) {  // h100_units2.cu --shared-offsets
         constexpr std::uint32_t kRegionRows = 128 * 256;      // 128 boxes of 32 KiB
         return tma_stream(c, c.sm.count, 4, 512, kRegionRows, kRegionRows, 128, 0, 1, step);
       }},
      {"tma_stream_all_sms_l2_shared_half_bytes_per_cycle_x100", UbenchParam::InFlight,
       [](const HardwareConfig& c, std::uint32_t in_flight) {
         return tma_stream(c, c.sm.count, in_flight / 32768, 512, 2048, 2 * 2048, 8, 0, 2);
       }},
      {"tma_stream_all_sms_l2_at_clock_bytes_per_ns_x100", UbenchParam::ClockMhz,
       [](const HardwareConfig& c, std::uint32_t mhz) {
         HardwareConfig at = c;  // the distinct stream at 128 KiB in flight, the SM clocked at `mhz`
         at.clock_ghz = mhz / 1000.0;
         const double per_cycle = static_cast<double>(tma_stream(at, c.sm.count, 4, 512, 2048, 2048 * c.sm.count, 8, 0));
         return static_cast<std::int64_t>(per_cycle * at.clock_ghz + 0.5);
       }},
      {"tma_first_load_latency", UbenchParam::BoxBytes,
       [](const HardwareConfig& c, std::uint32_t box) { return tma_first_load(c, box, false); }},
      {"tma_second_load_latency", UbenchParam::BoxBytes,
       [](const HardwareConfig& c, std::uint32_t box) { return tma_first_load(c, box, true); }},
      {"tma_store_latency", UbenchParam::BoxBytes,
       [](const HardwareConfig& c, std::uint32_t box) { return tma_store_latency(c, box, false); }},
      {"tma_store_read_latency", UbenchParam::BoxBytes,
       [](const HardwareConfig& c, std::uint32_t box) { return tma_store_latency(c, box, true); }},
      {"tma_stream_all_sms_hbm_bytes_per_cycle_x100", UbenchParam::InFlight,
       [](const HardwareConfig& c, std::uint32_t in_flight) {
         const std::uint32_t region = kHbmRows / c.sm.count / 256 * 256;
         return tma_stream(c, c.sm.count, in_flight / 32768, region / 256, region, kHbmRows, 0, 0);
       }},
  };
  for (UbenchScenario& s : wgmma_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : loaded_latency_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : cuda_core_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : hbm_box_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : l2_footprint_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : stage_ring_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : join_arrival_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : private_stream_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : hit_box_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : hbm_loaded_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : hit_miss_mix_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : bulk_write_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : hbm_burst_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : box_spread_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : smem_port_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : epilogue_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : epilogue_background_scenarios()) all.push_back(std::move(s));
  for (UbenchScenario& s : b200_published_scenarios()) all.push_back(std::move(s));
  return all;
}

KernelReport run_from_cli(const KernelRequest& req) {
  const std::string& name = req.args.text("scenario");
  const UbenchScenario* s = find_ubench(name);
  if (!s) {
    std::string names;
    for (const UbenchScenario& u : ubench_scenarios()) names += fmt::format("{}{}", names.empty() ? "" : ", ", u.name);
    throw InputError(fmt::format("--scenario: unknown '{}'; one of {}", name, names));
  }
  const auto param = static_cast<std::uint32_t>(req.args.integer("size", 0, 1u << 20));
  KernelReport rep;
  rep.kernel = "ubench";
  rep.problem = fmt::format("{} (param {})", s->name, param);
  rep.figures = {{"scenario", s->name}, {"param", param}, {"value", run_ubench(req.config, *s, param)}};
  return rep;
}

}  // namespace

std::int64_t run_ubench(const HardwareConfig& config, const UbenchScenario& s, std::uint32_t param) {
  constexpr std::uint32_t kBox = 32768;
  switch (s.param) {
    case UbenchParam::Ignored: break;
    case UbenchParam::ClusterSize:
      if (param == 0 || param > config.cluster.max_ctas)
        throw InputError(fmt::format("{}: a cluster size in 1..{} (cluster.max_ctas), got {}", s.name,
                                     config.cluster.max_ctas, param));
      break;
    case UbenchParam::BoxBytes:
      if (param % kRowBytes != 0 || param < kRowBytes || param > kBox)
        throw InputError(fmt::format("{}: box bytes, a multiple of 128 in 128..32768, got {}", s.name, param));
      break;
    case UbenchParam::ClockMhz:
      if (param < 100 || param > 5000)
        throw InputError(fmt::format("{}: an SM clock in MHz in 100..5000, got {}", s.name, param));
      break;
    case UbenchParam::WgmmaN:
      if (param % 8 != 0 || param < 8 || param > 256)
        throw InputError(fmt::format("{}: the wgmma's N, a multiple of 8 in 8..256, got {}", s.name, param));
      break;
    case UbenchParam::InFlight:
      if (param % kBox != 0 || param == 0 || 1024 + param + 8 * (param / kBox) > config.sm.max_smem_per_cta)
        throw InputError(fmt::format("{}: bytes in flight per CTA, whole 32 KiB boxes that fit the {} bytes of SMEM a "
                                     "CTA may have, got {}",
                                     s.name, config.sm.max_smem_per_cta, param));
      break;
    case UbenchParam::UmmaN:
      if (param % 16 != 0 || param < 16 || param > 256)
        throw InputError(fmt::format("{}: the MMA's N, a multiple of 16 in 16..256, got {}", s.name, param));
      break;
    case UbenchParam::SaBoxBytes:
      if (param < 512 || param > 131072 || (param & (param - 1)) != 0)
        throw InputError(fmt::format("{}: box bytes, 512 times a power of two up to 131072, got {}", s.name, param));
      break;
    case UbenchParam::SaTileBytes:
      if (param % 512 != 0 || param == 0 || param > 65536)
        throw InputError(fmt::format("{}: box bytes, whole 512-byte rows up to 65536, got {}", s.name, param));
      break;
    case UbenchParam::Ctas:
      if (param == 0 || param > config.sm.count)
        throw InputError(fmt::format("{}: CTAs, one per SM, in 1..{} (sm.count), got {}", s.name, config.sm.count, param));
      break;
    case UbenchParam::WarpsPerSubPartition:
      if (param == 0 || param > 8)
        throw InputError(fmt::format("{}: warps per sub-partition, 1..8, got {}", s.name, param));
      break;
    case UbenchParam::FootprintMib:
      if (param * 64 < config.sm.count || param > 1024)
        throw InputError(fmt::format("{}: MiB all SMs read, at least one 16 KiB box per SM ({}) and at most 1024, got {}",
                                     s.name, (config.sm.count + 63) / 64, param));
      break;
    case UbenchParam::BoxRows:
      if (param == 0 || param > 256) throw InputError(fmt::format("{}: box rows, 1..256, got {}", s.name, param));
      break;
    case UbenchParam::BoxStep:
      if (param > 127) throw InputError(fmt::format("{}: boxes between two SMs' first boxes, 0..127, got {}", s.name, param));
      break;
    case UbenchParam::LagBoxes:
      if (param > 255) throw InputError(fmt::format("{}: boxes a follower reads behind its leader, 0..255, got {}", s.name, param));
      break;
    case UbenchParam::BoxStages:
      if (param == 0 || param > 8) throw InputError(fmt::format("{}: 16 KiB boxes in flight per CTA, 1..8, got {}", s.name, param));
      break;
    case UbenchParam::BackgroundCtas:
      if (param >= config.sm.count)
        throw InputError(fmt::format("{}: SMs streaming beside the probe, 0..{} (sm.count - 1), got {}", s.name,
                                     config.sm.count - 1, param));
      break;
    case UbenchParam::Warps:
      if (param == 0 || param > 32) throw InputError(fmt::format("{}: warps of the CTA, 1..32, got {}", s.name, param));
      break;
    case UbenchParam::DelayCycles:
      if (param > 100000) throw InputError(fmt::format("{}: a delay in cycles, 0..100000, got {}", s.name, param));
      break;
    case UbenchParam::StreamInFlight:
      if (param % kBox != 0 || param > 4 * kBox)
        throw InputError(fmt::format("{}: bytes in flight per streaming CTA, 0 or 1..4 whole 32 KiB boxes, got {}",
                                     s.name, param));
      break;
  }
  return s.run(config, param);
}

const std::vector<UbenchScenario>& ubench_scenarios() {
  static const std::vector<UbenchScenario> all = make_scenarios();
  return all;
}

const UbenchScenario* find_ubench(const std::string& name) {
  for (const UbenchScenario& s : ubench_scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<UbenchComparison> compare_with_hardware(const HardwareConfig& config, const std::string& measured_csv,
                                                    const std::string& tolerances_csv) {
  std::map<std::pair<std::string, std::string>, std::pair<double, std::string>> tolerance;
  if (!tolerances_csv.empty())
    for (const auto& t : read_csv_rows(tolerances_csv, 4)) {
      const double tol = std::strtod(t[2].c_str(), nullptr);
      if (!(tol > 0 && tol < 10)) throw InputError(fmt::format("{}: tolerance '{}': a fraction such as 0.12", t[4], t[2]));
      tolerance[{t[0], t[1]}] = {tol, t[3]};
    }
  std::vector<UbenchComparison> out;
  for (const auto& row : read_csv_rows(measured_csv, 3)) {
    const UbenchScenario* s = find_ubench(row[0]);
    if (!s) throw InputError(fmt::format("{}: no simulated scenario '{}'", row[3], row[0]));
    UbenchComparison c;
    c.scenario = row[0];
    c.param = static_cast<std::uint32_t>(parse_integer(row[1], row[3] + " param", 0, 1u << 20));
    // Integer rows as they are; a decimal one (h100_tma_reduce.csv's bytes per cycle) to the
    // nearest integer, as its scenario computes its value.
    char* end = nullptr;
    const double value = std::strtod(row[2].c_str(), &end);
    if (row[2].empty() || *end != '\0' || !(value >= 0.5 && value < 0x1p40))
      throw InputError(fmt::format("{} measured value must be a number in 1..2^40, got '{}'", row[3], row[2]));
    c.measured = std::llround(value);
    c.predicted = run_ubench(config, *s, c.param);
    c.error = static_cast<double>(c.predicted - c.measured) / static_cast<double>(c.measured);
    c.tolerance = 0.10;
    for (const std::string& p : {row[1], std::string("*")})
      if (auto it = tolerance.find({row[0], p}); it != tolerance.end()) {
        c.tolerance = it->second.first;
        c.reason = it->second.second;
        break;
      }
    out.push_back(std::move(c));
  }
  return out;
}

KernelInfo ubench_kernel_info() {
  return KernelInfo{"ubench",
                    "The H100 calibration microbenchmarks (tools/calibration/h100_ubench.cu) as simulated programs; "
                    "prints the scenario's value in the CSV's unit",
                    {{"scenario", "one of the CSV's scenarios, e.g. mbarrier_same_thread, tma_2d_latency_l2",
                      "mbarrier_same_thread"},
                     {"size", "the CSV's param column: cluster size, box bytes, bytes in flight, CTAs, wgmma N or MHz", "1"}},
                    &run_from_cli};
}

}  // namespace bwsim
