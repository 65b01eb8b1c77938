// tools/calibration/h100_epilogue.cu's epilogue rows as a bwsim program: G CTAs (one per SM) of
// 384 threads laid out as gemm_sm90's (WG0 gives up registers and leaves; WG1, WG2 the consumers),
// W consumer warpgroups each running 256 chunks of gemm_sm90's epilogue chunk, or of some of its
// parts: St (each warp converts and stores its 2 KiB of the 64 x 64 bf16 chunk, st.shared.b32),
// Fence (fence.proxy.async), Bar (bar.sync 1+g, 128 before the stores and after the fence), Tma
// (the WG's first warp: wait_group.read 1 first, a TMA store of the 64 x 64 box + commit last).
// Value: the median over CTAs of the slower WG's cycles per chunk, x 100, param G.
// Also the .cu's store order: one CTA of W warps (1, 2), each issuing k 8 KiB TMA stores back to
// back after a bar.sync and then waiting for them one by one (wait_group.read, or wait_group for
// the write rows): store_order_<read|write>_w<W>_k<k>_store<i>_cycles, param the warp, the cycles
// from the bar.sync to the i-th store's wait passing; store_order_issue_w<W>_k<k>_cycles: when the
// warp had issued its k stores and commits.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kChunks = kEpilogueChunks, kChunkBytes = kEpilogueChunkBytes;
constexpr std::uint32_t kSt = 1, kFence = 2, kBar = 4, kTma = 8;

std::int64_t cycles_per_chunk_x100(const HardwareConfig& c, std::uint32_t parts, std::uint32_t wgs, std::uint32_t g) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing, .check_races = false});
  const TensorMap d = epilogue_chunk_map(sim);
  std::vector<std::array<Cycle, 2>> took(g, std::array<Cycle, 2>{});
  auto program = [&](Warp& w) -> Task {
    if (w.warpgroup_idx() == 0) {
      w.setmaxnreg_dec(40);
      co_return;
    }
    co_await w.setmaxnreg_inc(232);
    const std::uint32_t wg = w.warpgroup_idx() - 1, wi = w.warp_idx() % 4;
    if (wg >= wgs) co_return;
    co_await w.bar_sync(1 + wg, 128);
    const Cycle t0 = w.now();
    for (std::uint32_t q = 0; q < kChunks; ++q) {
      const SmemAddr buf{(2 * wg + q % 2) * kChunkBytes};
      if ((parts & kTma) && wi == 0) co_await w.bulk_wait_group_read(1);
      if (parts & kBar) co_await w.bar_sync(1 + wg, 128);
      if (parts & kSt) store_epilogue_chunk(w, buf);
      if (parts & kFence) w.fence_proxy_async();
      if (parts & kBar) co_await w.bar_sync(1 + wg, 128);
      if ((parts & kTma) && wi == 0) {
        const std::uint32_t box = (w.cta_idx() * 2 + wg) * 64 + q;
        w.tma_store(d, buf, {static_cast<std::int32_t>(box % 16 * 64), static_cast<std::int32_t>(box / 16 % 16 * 64)});
        w.bulk_commit_group();
      }
      // No time: the warps take the port and pipes in time order, not one whole loop after
      // another (a warp's straight-line code runs ahead of the others).
      co_await w.sleep(0);
    }
    if (wi == 0) took[w.cta_idx()][wg] = w.now() - t0;
    if ((parts & kTma) && wi == 0) co_await w.bulk_wait_group(0);
  };
  const LaunchConfig launch{.grid_ctas = g, .block_threads = 384, .dynamic_smem_bytes = 4 * kChunkBytes,
                            .registers_per_thread = 168};
  sim.launch("ubench", launch, program);  // warm-up, as the .cu
  sim.launch("ubench", launch, program);
  std::vector<Cycle> slower(g);
  for (std::uint32_t i = 0; i < g; ++i) slower[i] = std::max(took[i][0], took[i][1]);
  return static_cast<std::int64_t>(100.0 * static_cast<double>(upper_median(slower)) / kChunks + 0.5);
}

// When each of the warps' k stores had read SMEM (or been written), and when each warp had issued
// them, in cycles after the bar.sync.
struct StoreOrder {
  std::vector<Cycle> done, issued;
};

StoreOrder store_order(const HardwareConfig& c, bool write, std::uint32_t warps, std::uint32_t k) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing, .check_races = false});
  const TensorMap d = epilogue_chunk_map(sim);
  StoreOrder o{std::vector<Cycle>(warps * k), std::vector<Cycle>(warps)};
  auto program = [&](Warp& w) -> Task {
    co_await w.syncthreads();
    const Cycle t0 = w.now();
    const std::uint32_t wi = w.warp_idx();
    for (std::uint32_t i = 0; i < k; ++i) {
      const std::uint32_t box = wi * 8 + i;
      w.tma_store(d, SmemAddr{box * kChunkBytes}, {static_cast<std::int32_t>(box % 16 * 64), static_cast<std::int32_t>(box / 16 * 64)});
      w.bulk_commit_group();
    }
    o.issued[wi] = w.now() - t0;
    for (std::uint32_t i = 0; i < k; ++i) {
      if (write)
        co_await w.bulk_wait_group(k - 1 - i);
      else
        co_await w.bulk_wait_group_read(k - 1 - i);
      o.done[wi * k + i] = w.now() - t0;
    }
  };
  const LaunchConfig launch{.grid_ctas = 1, .block_threads = 32 * warps, .dynamic_smem_bytes = 16 * kChunkBytes};
  sim.launch("ubench", launch, program);  // warm-up: the boxes resident, as the .cu's first launch
  sim.launch("ubench", launch, program);
  return o;
}

}  // namespace

std::vector<UbenchScenario> epilogue_scenarios() {
  struct Variant {
    const char* name;
    std::uint32_t parts;
  };
  static constexpr Variant kVariants[] = {
      {"full", kSt | kFence | kBar | kTma}, {"no_fence", kSt | kBar | kTma}, {"no_tma", kSt | kFence | kBar},
      {"st_bar", kSt | kBar},               {"st_fence", kSt | kFence},     {"st", kSt},
      {"fence_bar", kFence | kBar},         {"bar", kBar},                  {"fence", kFence},
      {"bar_tma", kBar | kTma},
  };
  std::vector<UbenchScenario> all;
  for (const std::uint32_t wgs : {1u, 2u})
    for (const Variant& v : kVariants)
      all.push_back({fmt::format("epilogue_{}_wg{}_cycles_per_chunk_x100", v.name, wgs), UbenchParam::Ctas,
                     [parts = v.parts, wgs](const HardwareConfig& c, std::uint32_t g) {
                       return cycles_per_chunk_x100(c, parts, wgs, g);
                     }});
  for (const bool write : {false, true})
    for (const std::uint32_t warps : {1u, 2u})
      for (const std::uint32_t k : {1u, 2u, 4u})
        for (std::uint32_t i = 0; i < k; ++i)
          all.push_back({fmt::format("store_order_{}_w{}_k{}_store{}_cycles", write ? "write" : "read", warps, k, i),
                         UbenchParam::Ignored, [=](const HardwareConfig& c, std::uint32_t warp) {
                           if (warp >= warps) throw InputError(fmt::format("param {}: the warp, 0..{}", warp, warps - 1));
                           return static_cast<std::int64_t>(store_order(c, write, warps, k).done[warp * k + i]);
                         }});
  for (const std::uint32_t warps : {1u, 2u})
    for (const std::uint32_t k : {1u, 2u, 4u})
      all.push_back({fmt::format("store_order_issue_w{}_k{}_cycles", warps, k), UbenchParam::Ignored,
                     [=](const HardwareConfig& c, std::uint32_t warp) {
                       if (warp >= warps) throw InputError(fmt::format("param {}: the warp, 0..{}", warp, warps - 1));
                       return static_cast<std::int64_t>(store_order(c, false, warps, k).issued[warp]);
                     }});
  return all;
}

}  // namespace bwsim
