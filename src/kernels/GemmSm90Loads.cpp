// tools/calibration/h100_gemm_loads.cu as a bwsim kernel: gemm_sm90_twin.cu's persistent GEMM
// without its math, the producer alone. One warp per CTA walks the CTA's tiles in the static
// persistent order (raster, swizzle) and, per k-block, loads the A box {64, rows} at (64 kb,
// rows m) and/or the B box {64, tile_n} at (64 kb, tile_n n) into stage i % S on one barrier per
// stage, waiting for the stage's previous loads to land before it reuses it: S stages in flight,
// no consumer, no epilogue. The issue 15 diagnostic: the swizzle-1 order's loads alone, with A, B
// or both (silicon: run_loads_locality.sh, PARTS=a|b), with the operands' 256B or 128B L2
// promotion (--l2-promotion; PROMOTION=128 there), A optionally private to each CTA
// (run_loads_joins.sh). --tile-log writes when each tile's first loads went out, in the twin's
// format.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/kernels/GemmSm90.hpp"
#include "bwsim/kernels/TileScheduler.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kRowBytes = 128;  // a box row: one k-block of kSm90TileK bf16

KernelReport run_from_cli(const KernelRequest& req) {
  const KernelArgs& a = req.args;
  const auto m = static_cast<std::uint32_t>(a.integer("m", 1, 1u << 20));
  const auto n = static_cast<std::uint32_t>(a.integer("n", 1, 1u << 20));
  const auto k = static_cast<std::uint32_t>(a.integer("k", 1, 1u << 20));
  const auto rows = static_cast<std::uint32_t>(a.integer("rows", 1, 256));
  const auto tile_n = static_cast<std::uint32_t>(a.integer("tile-n", 1, 256));
  const auto stages = static_cast<std::uint32_t>(a.integer("stages", 1, 32));
  const std::string& parts = a.text("parts");
  if (parts != "ab" && parts != "a" && parts != "b")
    throw InputError(fmt::format("--parts: expected ab, a or b, got '{}'", parts));
  const bool load_a = parts != "b", load_b = parts != "a";
  const std::string& private_a = a.text("private-a");
  if (private_a != "none" && private_a != "hbm" && private_a != "l2")
    throw InputError(fmt::format("--private-a: expected none, hbm or l2, got '{}'", private_a));
  const Raster raster = raster_arg(a);
  const auto swizzle = static_cast<std::uint32_t>(a.integer("swizzle", 1, 8));
  const L2Promotion promotion = l2_promotion_arg(a);
  // A stage holds the boxes of the parts loaded (A's then B's), as the CUDA program's does.
  const std::uint32_t a_bytes = load_a ? rows * kRowBytes : 0;
  const std::uint32_t stage_bytes = a_bytes + (load_b ? tile_n * kRowBytes : 0);
  // At least 116 KiB, so that one CTA fits an SM whatever the stages hold (the CUDA program's rule).
  const std::uint32_t smem = std::max(1024 + stages * stage_bytes + 8 * stages, 116u * 1024);
  if (smem > req.config.sm.max_smem_per_cta)
    throw InputError(fmt::format("--stages {}: {} bytes of SMEM (the stages, and at least 116 KiB so that one CTA "
                                 "fills an SM as on the H100/H200), the CTA may have {}",
                                 stages, smem, req.config.sm.max_smem_per_cta));

  Simulator sim(req.config, req.options);
  const std::uint32_t pitch = align_up(k * 2, 16);
  auto operand_map = [&](std::uint32_t operand_rows, std::uint32_t box_rows) {
    return sm90_operand_map(sim.gmem().alloc(static_cast<std::uint64_t>(pitch) * operand_rows), k, pitch, operand_rows,
                            box_rows, promotion);
  };
  const StaticPersistentScheduler scheduler(TileGrid{(m + rows - 1) / rows, (n + tile_n - 1) / tile_n, raster, swizzle});
  const std::uint32_t tiles = scheduler.tiles(), k_tiles = (k + kSm90TileK - 1) / kSm90TileK;
  const auto grid_arg = static_cast<std::uint32_t>(a.integer("grid", 0, 1u << 16));
  const std::uint32_t grid = grid_arg ? grid_arg : std::min(tiles, req.config.sm.count);
  // Private A (the CUDA program's --private-a): a band of `rows` rows per CTA, so no other SM reads
  // its A boxes; "hbm" walks all of K every tile, "l2" cycles through the first 4 k-blocks.
  const bool own_a = private_a != "none", hot_a = private_a == "l2";
  const TensorMap a_map = operand_map(own_a ? std::max(m, grid * rows) : m, rows), b_map = operand_map(n, tile_n);
  std::vector<TileStart> starts;
  const bool log_kblocks = a.integer("kb-log", 0, 1) != 0;
  const RunResult run = sim.launch(
      "gemm_sm90_loads", LaunchConfig{.grid_ctas = grid, .block_threads = 32, .dynamic_smem_bytes = smem},
      [&](Warp& w) -> Task {
        const std::uint32_t base = 1024, bars = base + stages * stage_bytes;
        auto bar = [&](std::uint32_t s) { return MBarrierRef{bars + 8 * s}; };
        for (std::uint32_t s = 0; s < stages; ++s) w.mbarrier_init(bar(s), 1);
        w.fence_mbarrier_init();
        std::uint32_t i = 0;
        for (std::uint32_t j = 0, t = w.cta_idx(); t < tiles; t += grid, ++j) {
          const auto [tm, tn] = scheduler.tile(t);
          for (std::uint32_t kb = 0; kb < k_tiles; ++kb, ++i) {
            const std::uint32_t s = i % stages;
            if (i >= stages) co_await w.mbarrier_wait(bar(s), ((i - stages) / stages) & 1u);
            if (kb == 0 || log_kblocks) starts.push_back({w.cta_idx(), w.sm_idx(), j, t, tm, tn, w.now(), kb});
            w.mbarrier_arrive_expect_tx(bar(s), stage_bytes);
            const auto x = static_cast<std::int32_t>(kb * kSm90TileK);
            if (load_a) {
              const std::uint32_t a_row = own_a ? w.cta_idx() * rows : tm * rows, a_kb = hot_a ? kb & 3u : kb;
              w.tma_load(a_map, SmemAddr{base + s * stage_bytes}, bar(s),
                         {static_cast<std::int32_t>(a_kb * kSm90TileK), static_cast<std::int32_t>(a_row)});
            }
            if (load_b)
              w.tma_load(b_map, SmemAddr{base + s * stage_bytes + a_bytes}, bar(s),
                         {x, static_cast<std::int32_t>(tn * tile_n)});
          }
        }
        for (std::uint32_t last = i - std::min(i, stages); last < i; ++last)  // the loads still in flight
          co_await w.mbarrier_wait(bar(last % stages), (last / stages) & 1u);
      });
  if (const std::string& log = a.text("tile-log"); !log.empty())
    write_tile_log(log, starts, req.config.clock_ghz, log_kblocks);
  KernelReport rep;
  rep.kernel = "gemm_sm90_loads";
  rep.problem = fmt::format("gemm_sm90's loads alone ({}{}), M={} N={} K={} bf16, tile {}x{}x{}, {} stages, {} CTAs over {} "
                            "tiles, raster {}, swizzle {}",
                            parts == "ab" ? "A and B" : parts == "a" ? "A only" : "B only",
                            own_a ? (hot_a ? ", A private and L2-resident" : ", A private from HBM") : "", m, n, k, rows,
                            tile_n, kSm90TileK, stages, grid, tiles, raster == Raster::AlongN ? "N" : "M", swizzle);
  rep.run = run;
  rep.check_detail = "not checked";
  rep.figures = {{"tiles", tiles}, {"grid", grid}, {"stages", stages}};
  return rep;
}

}  // namespace

KernelInfo gemm_sm90_loads_kernel_info() {
  return KernelInfo{
      "gemm_sm90_loads",
      "gemm_sm90's TMA producer alone (tools/calibration/h100_gemm_loads.cu): each CTA walks its tiles and loads "
      "their A and/or B boxes through S stages, refilling a stage once it lands; no math, no epilogue",
      {{"m", "rows of A", "8192"},
       {"n", "rows of B", "8192"},
       {"k", "reduction length", "8192"},
       {"rows", "rows of an A box (tile M)", "128"},
       {"tile-n", "rows of a B box (tile N)", "128"},
       {"stages", "stages in flight", "6"},
       {"grid", "CTAs (persistent); 0: min(tiles, SMs)", "0"},
       {"raster", "tile order: m (M fastest) or n", "m"},
       {"swizzle", "tiles per raster band: 1, 2, 4 or 8", "1"},
       {"parts", "the boxes of a stage: ab (both), a or b", "ab"},
       {"l2-promotion", "the L2 promotion of A's and B's tensor maps in bytes: 256 or 128 (the CUDA program's "
                        "--promotion)", "256"},
       {"private-a", "A boxes of the CTA's own rows, read by no other SM: none (the tile's), hbm (all of K, every "
                     "tile) or l2 (the first 4 k-blocks, L2-resident)", "none"},
       {"tile-log", "write when each CTA started each tile (its first loads) to FILE as CSV, as h100_gemm_loads.cu "
                    "--tile-log does on hardware", ""},
       {"kb-log", "1: --tile-log has a row for every k-block's loads (a kb column), as h100_gemm_loads.cu --kb-log 1",
        "0"}},
      &run_from_cli};
}

}  // namespace bwsim
