// tools/calibration/h100_epilogue.cu's "epilogue_bg_*" rows as a bwsim program: one CTA of 384
// threads; WG1 runs 256 chunks of gemm_sm90's epilogue staging (or of its stores, or of its
// conversions alone) while a background takes the SM's SMEM from the same __syncthreads on:
// WG2's back-to-back wgmmas (m64n256k16 SS or RS, m64n64k16 SS; one in flight behind wait_group
// 1) or WG0's first warp's 8 KiB TMA stores or loads (4 in flight). Values: WG1's cycles per chunk
// x 100 ("_cycles_per_chunk_x100"), and the background's cycles per operation x 100 over its first
// 128 ("_op_cycles_x100"; "_alone_" with WG1 idle).
#include <fmt/format.h>

#include <utility>

#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kChunks = kEpilogueChunks, kChunkBytes = kEpilogueChunkBytes;
constexpr std::uint32_t kOps = 1024, kProbe = 128;  // the background's operations; its rate over the first kProbe
// SMEM: the 4 epilogue buffers (WG1's two, WG2's two: its wgmma's A), the background's 4 boxes
// (or the wgmmas' B), the loads' 4 mbarriers.
constexpr std::uint32_t kEpi = 0, kBg = 4 * kChunkBytes, kBars = kBg + 4 * kChunkBytes;

enum class Background { None, Wgmma256, Wgmma64, Wgmma256Rs, TmaStore, TmaLoad };
enum class Part { Staging, St, Cvt, Idle };

struct Measured {
  Cycle chunks = 0, probe = 0;  // WG1's loop; the background's first kProbe operations
};

Task wgmma_background(Warp& w, Background bg, Measured& m) {
  const std::uint32_t n = bg == Background::Wgmma64 ? 64 : 256;
  const WgmmaShape shape{.a_type = DataType::BF16, .b_type = DataType::BF16, .n = n};
  const std::vector<std::uint32_t> a_regs(32 * kWgmmaARegisters, 0);
  WgmmaAccumulator acc(w, n);
  w.wgmma_fence();
  const Cycle t0 = w.now();
  for (std::uint32_t i = 0; i < kOps; ++i) {
    const GmmaDescriptor b = k_major_swizzle128_descriptor(kBg + (i % 4) * 32);
    if (bg == Background::Wgmma256Rs)
      w.wgmma(acc, a_regs, b, shape, true);
    else
      w.wgmma(acc, k_major_swizzle128_descriptor(kEpi + 2 * kChunkBytes + (i % 4) * 32), b, shape, true);
    w.wgmma_commit_group();
    co_await w.wgmma_wait_group(1);
    if (i + 1 == kProbe && w.warp_idx() == 8) m.probe = w.now() - t0;
  }
  co_await w.wgmma_wait_group(0);
}

Task tma_background(Warp& w, Background bg, const TensorMap& d, Measured& m) {
  auto bar = [](std::uint32_t s) { return MBarrierRef{kBars + 8 * s}; };
  const Cycle t0 = w.now();
  for (std::uint32_t i = 0; i < kOps; ++i) {
    const std::uint32_t s = i % 4, box = i;
    const TensorCoords at{static_cast<std::int32_t>(box % 16 * 64), static_cast<std::int32_t>(box / 16 % 16 * 64)};
    if (bg == Background::TmaStore) {
      co_await w.bulk_wait_group_read(3);
      w.tma_store(d, SmemAddr{kBg + s * kChunkBytes}, at);
      w.bulk_commit_group();
      if (i + 1 == kProbe) co_await w.bulk_wait_group_read(0);
    } else {
      if (i >= 4) co_await w.mbarrier_wait(bar(s), (i / 4 - 1) & 1u);
      w.mbarrier_arrive_expect_tx(bar(s), kChunkBytes);
      w.tma_load(d, SmemAddr{kBg + s * kChunkBytes}, bar(s), at);
      if (i + 1 == kProbe) co_await w.mbarrier_wait(bar(s), (i / 4) & 1u);
    }
    if (i + 1 == kProbe) m.probe = w.now() - t0;
  }
  if (bg == Background::TmaStore) co_await w.bulk_wait_group(0);
  else
    for (std::uint32_t i = kOps - 4; i < kOps; ++i) co_await w.mbarrier_wait(bar(i % 4), (i / 4) & 1u);
}

Task measured_chunks(Warp& w, Part part, Measured& m) {
  co_await w.bar_sync(1, 128);
  const Cycle t0 = w.now();
  for (std::uint32_t q = 0; q < kChunks; ++q) {
    const SmemAddr buf{kEpi + (q % 2) * kChunkBytes};
    if (part == Part::Staging) co_await w.bar_sync(1, 128);
    if (part == Part::Cvt) {
      // 16 cvt.rn.bf16x2.f32, their 8 sums and 8 folds, and 32 fp32 adds making the next inputs.
      const Warp::PipeWork work[] = {{CorePipe::Cvt, 16}, {CorePipe::Alu, 16}, {CorePipe::Fma, 32}};
      w.execute(work);
    } else {
      store_epilogue_chunk(w, buf);
    }
    if (part == Part::Staging) {
      w.fence_proxy_async();
      co_await w.bar_sync(1, 128);
    }
    co_await w.sleep(0);  // the warps take the port and pipes in time order (see UbenchEpilogue.cpp)
  }
  if (w.warp_idx() % 4 == 0) m.chunks = w.now() - t0;
}

Measured run(const HardwareConfig& c, Background bg, Part part) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing, .check_races = false});
  const TensorMap d = epilogue_chunk_map(sim);
  Measured m;
  auto program = [&](Warp& w) -> Task {
    if (w.warp_idx() == 0)
      for (std::uint32_t s = 0; s < 4; ++s) w.mbarrier_init(MBarrierRef{kBars + 8 * s}, 1);
    co_await w.syncthreads();
    if (w.warpgroup_idx() == 0) {
      w.setmaxnreg_dec(40);
      if (w.warp_idx() == 0 && (bg == Background::TmaStore || bg == Background::TmaLoad))
        co_await tma_background(w, bg, d, m);
      co_return;
    }
    co_await w.setmaxnreg_inc(232);
    if (w.warpgroup_idx() == 2) {
      if (bg == Background::Wgmma256 || bg == Background::Wgmma64 || bg == Background::Wgmma256Rs)
        co_await wgmma_background(w, bg, m);
      co_return;
    }
    if (part != Part::Idle) co_await measured_chunks(w, part, m);
  };
  const LaunchConfig launch{.grid_ctas = 1, .block_threads = 384, .dynamic_smem_bytes = kBars + 64,
                            .registers_per_thread = 168};
  sim.launch("ubench", launch, program);  // warm-up, as the .cu's first launch
  m = {};
  sim.launch("ubench", launch, program);
  return m;
}

}  // namespace

std::vector<UbenchScenario> epilogue_background_scenarios() {
  struct Named {
    const char* name;
    Background bg;
  };
  static constexpr Named kBackgrounds[] = {{"none", Background::None},         {"wgmma256", Background::Wgmma256},
                                           {"wgmma64", Background::Wgmma64},   {"wgmma256rs", Background::Wgmma256Rs},
                                           {"tma_store", Background::TmaStore}, {"tma_load", Background::TmaLoad}};
  static constexpr std::pair<const char*, Part> kParts[] = {{"staging", Part::Staging}, {"st", Part::St}, {"cvt", Part::Cvt}};
  std::vector<UbenchScenario> all;
  for (const Named& b : kBackgrounds) {
    for (const auto& [part_name, part] : kParts) {
      all.push_back({fmt::format("epilogue_bg_{}_{}_cycles_per_chunk_x100", b.name, part_name), UbenchParam::Ignored,
                     [bg = b.bg, part](const HardwareConfig& c, std::uint32_t) {
                       return static_cast<std::int64_t>(100.0 * static_cast<double>(run(c, bg, part).chunks) / kChunks + 0.5);
                     }});
      if (b.bg != Background::None)
        all.push_back({fmt::format("epilogue_bg_{}_{}_op_cycles_x100", b.name, part_name), UbenchParam::Ignored,
                       [bg = b.bg, part](const HardwareConfig& c, std::uint32_t) {
                         return static_cast<std::int64_t>(100.0 * static_cast<double>(run(c, bg, part).probe) / kProbe + 0.5);
                       }});
    }
    if (b.bg != Background::None)
      all.push_back({fmt::format("epilogue_bg_{}_alone_op_cycles_x100", b.name), UbenchParam::Ignored,
                     [bg = b.bg](const HardwareConfig& c, std::uint32_t) {
                       return static_cast<std::int64_t>(100.0 * static_cast<double>(run(c, bg, Part::Idle).probe) / kProbe + 0.5);
                     }});
  }
  return all;
}

}  // namespace bwsim
