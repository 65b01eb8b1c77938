#include "bwsim/kernels/GemmSm90.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"
#include "bwsim/kernel/Pipeline.hpp"
#include "bwsim/kernels/GemmReference.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kRowBytes = 128;        // one k-block row: 64 bf16, the 128B swizzle span
constexpr std::uint32_t kTileK = kSm90TileK;
constexpr std::uint32_t kKSteps = kRowBytes / 32;  // wgmma k16 steps per k-block
constexpr std::uint32_t kChunk = 64;            // epilogue chunk: 64 rows x 64 columns
constexpr std::uint32_t kChunkBytes = kChunk * kChunk * 2;
constexpr std::uint32_t kConsumers = 2;         // consumer warpgroups
constexpr std::uint32_t kProducerRegisters = 40, kConsumerRegisters = 232;
constexpr std::uint32_t kLaunchRegisters = 168;  // __launch_bounds__(384, 1): 65536 / 384, a multiple of 8
constexpr std::uint32_t kMaxStages = 16;

struct Layout {
  std::uint32_t tile_m = 0, stage_bytes = 0, a_bytes = 0, stages = 0;
  std::uint32_t epilogue = 0, barriers = 0, turns = 0, smem_bytes = 0;

  SmemAddr a(std::uint32_t s) const { return SmemAddr{s * stage_bytes}; }
  SmemAddr b(std::uint32_t s) const { return SmemAddr{s * stage_bytes + a_bytes}; }
  SmemAddr buffer(std::uint32_t wg, std::uint32_t i) const { return SmemAddr{epilogue + (2 * wg + i) * kChunkBytes}; }
  MBarrierRef mma_turn(std::uint32_t wg) const { return MBarrierRef{turns + 8 * wg}; }
  MBarrierRef epi_turn(std::uint32_t wg) const { return MBarrierRef{turns + 16 + 8 * wg}; }
};

// Stages, then the epilogue buffers (2 per consumer WG), then full/empty barriers and the four
// turn barriers; as many stages as fit under the CTA's SMEM limit unless given.
Layout make_layout(const GemmSm90Params& p, std::uint32_t max_smem) {
  Layout l;
  l.tile_m = gemm_sm90_tile_m(p);
  l.a_bytes = l.tile_m * kRowBytes;
  l.stage_bytes = l.a_bytes + p.tile_n * kRowBytes;
  auto fill = [&](std::uint32_t stages) {
    l.stages = stages;
    l.epilogue = stages * l.stage_bytes;
    l.barriers = l.epilogue + 2 * kConsumers * kChunkBytes;
    l.turns = l.barriers + PipelineBarriers::smem_bytes(stages);
    l.smem_bytes = l.turns + 32;
  };
  if (p.stages) {
    fill(p.stages);
    return l;
  }
  std::uint32_t s = 1;
  for (fill(s + 1); s < kMaxStages && l.smem_bytes <= max_smem; fill(s + 1)) ++s;
  fill(s);
  return l;
}

GmmaDescriptor operand(SmemAddr at) { return k_major_swizzle128_descriptor(at.offset); }

struct Kernel {
  const GemmSm90Params& p;
  const TensorMap& a_map;
  const TensorMap& b_map;
  const TensorMap& d_map;
  Layout layout;
  const TileScheduler& scheduler;  // a CTA is its worker
  std::uint32_t k_tiles;
  std::vector<TileStart>* tile_starts;  // null: not logged
  std::vector<TilePhases>* tile_phases;  // null: not logged

  // The k-th tile of w's CTA (scheduler.tiles() when it has no more).
  std::uint32_t unit(const Warp& w, std::uint32_t k) const { return scheduler.work_unit(w.cta_idx(), w.grid_ctas(), k); }
  // The twin's index arithmetic, as compiled: its first work unit (blockIdx.x + rotate) % gridDim.x
  // is one u32 division by a run-time divisor, and tile_of (raster band, then the tile in the band)
  // two, each feeding the next (warp.udiv_latency; their glue is not charged).
  static void first_unit_math(Warp& w) { w.advance(w.config().warp.udiv_latency); }
  static void tile_of_math(Warp& w) { w.advance(2 * w.config().warp.udiv_latency); }

  bool pingpong() const { return p.schedule == Sm90Schedule::Pingpong; }
  std::uint32_t fragments() const { return p.rows_per_wg / kWgmmaM; }
  // Warpgroups reading each stage: both (cooperative) or the tile's owner (ping-pong).
  std::uint32_t stage_readers() const { return pingpong() ? 1 : kConsumers; }

  Task operator()(Warp& w) const {
    const PipelineTmaAsync mainloop(SmemAddr{layout.barriers},
                                    {.stages = layout.stages,
                                     .transaction_bytes = layout.stage_bytes,
                                     .consumer_warps = 4 * stage_readers(),
                                     .name = "mainloop"});
    if (w.warp_idx() == 0) {
      mainloop.init(w);
      for (std::uint32_t g = 0; g < kConsumers; ++g) {
        w.mbarrier_init(layout.mma_turn(g), 4, fmt::format("mma_turn[{}]", g));
        w.mbarrier_init(layout.epi_turn(g), 4, fmt::format("epi_turn[{}]", g));
      }
    }
    co_await w.syncthreads();
    if (w.warpgroup_idx() == 0) {
      w.setmaxnreg_dec(kProducerRegisters);
      if (w.warp_idx() == 0) co_await producer(w, mainloop);
    } else {
      co_await w.setmaxnreg_inc(kConsumerRegisters);
      co_await consumer(w, mainloop, w.warpgroup_idx() - 1);
    }
  }

  Task producer(Warp& w, const PipelineTmaAsync& mainloop) const {
    w.set_role("Producer (TMA)");
    PipelineState st = make_producer_start_state(layout.stages);
    first_unit_math(w);
    for (std::uint32_t i = 0, t = unit(w, 0); t < scheduler.tiles(); t = unit(w, ++i)) {
      tile_of_math(w);
      const auto [tm, tn] = scheduler.tile(t);
      for (std::uint32_t kb = 0; kb < k_tiles; ++kb, ++st) {
        co_await mainloop.producer_acquire(w, st);  // empty, then arrive.expect_tx on full
        if (tile_starts && (kb == 0 || p.log_kblocks))  // stamped as the twin's, as the wait returns
          tile_starts->push_back({w.cta_idx(), w.sm_idx(), i, t, tm, tn, w.now(), kb});
        w.advance(p.producer_path_cycles);  // the loop's own code up to the loads
        const MBarrierRef full = mainloop.producer_get_barrier(st);
        const auto k0 = static_cast<std::int32_t>(kb * kTileK);
        w.tma_load(a_map, layout.a(st.index), full, {k0, static_cast<std::int32_t>(tm * layout.tile_m)});
        w.tma_load(b_map, layout.b(st.index), full, {k0, static_cast<std::int32_t>(tn * p.tile_n)});
      }
    }
    co_await mainloop.producer_tail(w, st);
  }

  Task consumer(Warp& w, const PipelineTmaAsync& mainloop, std::uint32_t g) const {
    w.set_role(fmt::format("Consumer WG{} w{}", g + 1, w.warp_idx() % 4));
    std::array<std::optional<WgmmaAccumulator>, 2> acc;
    for (std::uint32_t f = 0; f < fragments(); ++f) acc[f].emplace(w, p.tile_n);
    const WgmmaShape shape{.a_type = DataType::BF16, .b_type = DataType::BF16, .n = p.tile_n};
    const std::uint32_t r0 = pingpong() ? 0 : g * p.rows_per_wg;  // the WG's rows of the stage's A
    PipelineState st = make_consumer_start_state(layout.stages);
    auto skip_tile = [&] {
      for (std::uint32_t i = 0; i < k_tiles; ++i) ++st;
    };
    if (pingpong() && g == 1) skip_tile();
    first_unit_math(w);
    std::uint32_t mma_turns = 0, epi_turns = 0, chunk = 0;
    const std::uint32_t step = pingpong() ? kConsumers : 1;
    const bool logs = tile_phases && w.warp_idx() % 4 == 0;  // the WG's first thread, as the twin's
    TilePhases phases{.cta = w.cta_idx(), .wg = g, .j = 0, .cta_start = w.state().start};
    for (std::uint32_t local = pingpong() ? g : 0, t = unit(w, local); t < scheduler.tiles();
         local += step, t = unit(w, local)) {
      // Mainloop: one k-block of wgmmas stays in flight; the stage before it is released.
      if (pingpong() && local > 0) co_await w.mbarrier_wait(layout.mma_turn(g), mma_turns++ & 1u);
      phases.ml_start = w.now();
      w.wgmma_fence();
      PipelineState prev = st;
      for (std::uint32_t kb = 0; kb < k_tiles; ++kb) {
        co_await mainloop.consumer_wait(w, st);
        w.advance(p.consumer_path_cycles);  // the loop's own code up to the first wgmma
        for (std::uint32_t kk = 0; kk < kKSteps; ++kk)
          for (std::uint32_t f = 0; f < fragments(); ++f)
            w.wgmma(*acc[f], operand(layout.a(st.index) + (r0 + kWgmmaM * f) * kRowBytes + 32 * kk),
                    operand(layout.b(st.index) + 32 * kk), shape, kb > 0 || kk > 0);
        w.wgmma_commit_group();
        if (kb > 0) {
          co_await w.wgmma_wait_group(1);
          mainloop.consumer_release(w, prev);
        }
        prev = st;
        ++st;
      }
      if (pingpong()) w.mbarrier_arrive(layout.mma_turn(1 - g));
      co_await w.wgmma_wait_group(0);
      phases.ml_end = w.now();
      mainloop.consumer_release(w, prev);
      if (pingpong()) skip_tile();

      // Epilogue.
      if (pingpong() && local > 0) co_await w.mbarrier_wait(layout.epi_turn(g), epi_turns++ & 1u);
      phases.epi_start = w.now();
      phases.chunk_count = fragments() * (p.tile_n / kChunk);
      tile_of_math(w);  // the compiler computes the tile's coordinates where the epilogue needs them
      const auto [tm, tn] = scheduler.tile(t);
      for (std::uint32_t f = 0; f < fragments(); ++f)
        for (std::uint32_t c = 0; c < p.tile_n / kChunk; ++c, ++chunk) {
          TilePhases::Chunk& steps = phases.chunks[f * (p.tile_n / kChunk) + c];
          const SmemAddr buf = layout.buffer(g, chunk % 2);
          if (w.warp_idx() % 4 == 0) co_await w.bulk_wait_group_read(1);  // the store from this buffer has read it
          steps.waited = w.now();
          co_await w.bar_sync(1 + g, 128);
          steps.synced = w.now();
          stage_chunk(w, *acc[f], c, buf);
          w.fence_proxy_async();
          co_await w.bar_sync(1 + g, 128);
          steps.staged = w.now();
          if (w.warp_idx() % 4 == 0) {
            w.tma_store(d_map, buf,
                        {static_cast<std::int32_t>(tn * p.tile_n + c * kChunk),
                         static_cast<std::int32_t>(tm * layout.tile_m + r0 + kWgmmaM * f)});
            w.bulk_commit_group();
          }
          steps.issued = w.now();
        }
      phases.epi_end = w.now();
      if (logs) tile_phases->push_back(phases);
      ++phases.j;
      if (pingpong()) {
        co_await w.bar_sync(1 + g, 128);
        w.mbarrier_arrive(layout.epi_turn(1 - g));
      }
    }
    if (w.warp_idx() % 4 == 0) co_await w.bulk_wait_group(0);
  }

  // The warp's 16 rows of columns [64c, 64c + 64) of the fragment, converted to bf16 (one
  // cvt.rn.bf16x2.f32 per pair of values) and stored into its 2 KiB of the 128B-swizzled buffer.
  void stage_chunk(Warp& w, WgmmaAccumulator& acc, std::uint32_t c, SmemAddr buf) const {
    constexpr std::uint32_t kBytes = 16 * kChunk * 2;
    const std::uint32_t wi = w.warp_idx() % 4;
    std::array<std::byte, kBytes> staged{};
    const auto v = acc.values();
    if (w.functional())
      for (std::uint32_t lane = 0; lane < 32; ++lane)
        for (std::uint32_t r = 0; r < acc.registers(); ++r) {
          const FragmentCoord at = wgmma_accumulator_coord(wi, lane, r);
          if (at.col / kChunk != c) continue;
          const std::uint32_t offset = (at.row - 16 * wi) * kRowBytes + (at.col % kChunk) * 2;
          store_from_float(DataType::BF16, v[lane * acc.registers() + r], &staged[swizzle_offset(Swizzle::B128, offset)]);
        }
    // st.shared.b32, as the twin, each of a pair converted just before (32 values per thread: 16
    // cvt.rn.bf16x2.f32 between the 16 stores).
    w.st_shared_tensor(buf + 16 * wi * kRowBytes, staged, 4, {CorePipe::Cvt, kChunk * 16 / 32 / 2});
  }
};

void validate(const GemmSm90Params& p, const HardwareConfig& config) {
  if (config.wgmma.f16_flops_per_cycle == 0)
    throw InputError(fmt::format("the {} config has no wgmma (wgmma.f16_flops_per_cycle = 0): gemm_sm90 needs a "
                                 "Hopper config such as sim_configs/h100.yaml",
                                 config.name));
  if (p.rows_per_wg != 64 && p.rows_per_wg != 128)
    throw InputError(fmt::format("--rows-per-wg {}: 64 or 128 (one or two m64 fragments)", p.rows_per_wg));
  if (p.draws == 0 || (p.draws > 1 && (p.log_tiles || p.log_phases)))
    throw InputError(fmt::format("--draws {}: at least 1, and 1 with a tile, phase or chunk log (the logs are of one "
                                 "launch)",
                                 p.draws));
  if (p.tile_n % kChunk != 0 || p.tile_n < kChunk || p.tile_n > 256)
    throw InputError(fmt::format("--tile-n {}: a multiple of 64 in 64..256", p.tile_n));
  if ((p.rows_per_wg / kWgmmaM) * p.tile_n / 2 > 192)
    throw InputError(fmt::format("--rows-per-wg {} --tile-n {}: {} accumulator registers per thread leave too few of "
                                 "the consumers' {}",
                                 p.rows_per_wg, p.tile_n, (p.rows_per_wg / kWgmmaM) * p.tile_n / 2, kConsumerRegisters));
  if (std::popcount(p.swizzle) != 1 || p.swizzle > 8)
    throw InputError(fmt::format("--swizzle {}: expected 1, 2, 4 or 8", p.swizzle));
}

}  // namespace

std::uint32_t gemm_sm90_tile_m(const GemmSm90Params& p) {
  return p.schedule == Sm90Schedule::Cooperative ? kConsumers * p.rows_per_wg : p.rows_per_wg;
}

GemmSm90Result run_gemm_sm90(const HardwareConfig& config, const SimOptions& options, const GemmSm90Params& p,
                             bool check) {
  validate(p, config);
  const Layout layout = make_layout(p, config.sm.max_smem_per_cta);
  if (layout.smem_bytes > config.sm.max_smem_per_cta)
    throw InputError(fmt::format("--stages {}: {} bytes of SMEM, the CTA may have {}", p.stages, layout.smem_bytes,
                                 config.sm.max_smem_per_cta));
  constexpr DataType kAb = DataType::BF16, kD = DataType::BF16;
  const std::uint32_t ab_pitch = align_up(p.k * 2, 16), d_pitch = align_up(p.n * 2, 16);
  SimOptions drawn = options;
  if (p.draws > 1 && !drawn.perturb_seed) {
    drawn.perturb_seed = 1;
    drawn.perturb_sm_skew = kDispatchSpreadCycles;
  }
  Simulator sim(config, drawn);
  const GmemAddr a = sim.gmem().alloc(static_cast<std::uint64_t>(ab_pitch) * p.m);
  const GmemAddr b = sim.gmem().alloc(static_cast<std::uint64_t>(ab_pitch) * p.n);
  const GmemAddr d = sim.gmem().alloc(static_cast<std::uint64_t>(d_pitch) * p.m);
  const TensorMap a_map = sm90_operand_map(a, p.k, ab_pitch, p.m, layout.tile_m, p.l2_promotion);
  const TensorMap b_map = sm90_operand_map(b, p.k, ab_pitch, p.n, p.tile_n, p.l2_promotion);
  const TensorMap d_map = TensorMap::tiled({.dtype = kD, .address = d, .dims = {p.n, p.m}, .strides = {d_pitch},
                                            .box = {kChunk, kChunk}, .swizzle = Swizzle::B128});
  if (sim.gmem().holds_data()) {
    fill_random(sim.gmem().bytes(a, static_cast<std::uint64_t>(ab_pitch) * p.m), kAb, p.m, p.k, ab_pitch, 1);
    fill_random(sim.gmem().bytes(b, static_cast<std::uint64_t>(ab_pitch) * p.n), kAb, p.n, p.k, ab_pitch, 2);
  }
  const std::unique_ptr<TileScheduler> scheduler = tile_schedulers().at(p.tile_scheduler).make(
      TileGrid{(p.m + layout.tile_m - 1) / layout.tile_m, (p.n + p.tile_n - 1) / p.tile_n, p.raster, p.swizzle});
  GemmSm90Result r;
  Kernel kernel{p, a_map, b_map, d_map, layout, *scheduler, (p.k + kTileK - 1) / kTileK, nullptr, nullptr};
  r.stages = layout.stages;
  r.tiles = scheduler->tiles();
  r.tile_m = layout.tile_m;
  r.grid = p.grid ? p.grid : std::min(r.tiles, config.sm.count);
  r.flops = 2.0 * p.m * p.n * p.k;
  const LaunchConfig launch{.grid_ctas = r.grid,
                            .block_threads = 128 * (1 + kConsumers),
                            .dynamic_smem_bytes = layout.smem_bytes,
                            .registers_per_thread = kLaunchRegisters};
  for (std::uint32_t i = 0; i < p.warmup; ++i) sim.launch("gemm_sm90", launch, [&kernel](Warp& w) { return kernel(w); });
  if (p.log_tiles) kernel.tile_starts = &r.tile_starts;
  if (p.log_phases) kernel.tile_phases = &r.tile_phases;
  std::vector<std::pair<Cycle, RunResult>> measured;
  for (std::uint32_t i = 0; i < p.draws; ++i) {
    RunResult run = sim.launch("gemm_sm90", launch, [&kernel](Warp& w) { return kernel(w); });
    const WarpSpan span = warp_span(run);
    r.draw_spans.push_back(span.end > span.begin ? span.end - span.begin : 0);
    measured.emplace_back(r.draw_spans.back(), std::move(run));
  }
  std::stable_sort(measured.begin(), measured.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  r.span = measured[measured.size() / 2].first;
  r.run = std::move(measured[measured.size() / 2].second);
  if (check && sim.gmem().holds_data()) {
    const GemmCheck c = check_gemm({p.m, p.n, p.k, kAb, kD}, sim.gmem().bytes(a, static_cast<std::uint64_t>(ab_pitch) * p.m),
                                   ab_pitch, sim.gmem().bytes(b, static_cast<std::uint64_t>(ab_pitch) * p.n), ab_pitch,
                                   sim.gmem().bytes(d, static_cast<std::uint64_t>(d_pitch) * p.m), d_pitch);
    r.checked = true;
    r.matches = c.matches;
    r.detail = c.detail;
  }
  return r;
}

namespace {

GemmSm90Params params_from(const KernelArgs& a) {
  GemmSm90Params p;
  p.m = static_cast<std::uint32_t>(a.integer("m", 1, 1u << 20));
  p.n = static_cast<std::uint32_t>(a.integer("n", 1, 1u << 20));
  p.k = static_cast<std::uint32_t>(a.integer("k", 1, 1u << 20));
  const std::string& schedule = a.text("schedule");
  if (schedule != "cooperative" && schedule != "pingpong")
    throw InputError(fmt::format("--schedule: expected cooperative or pingpong, got '{}'", schedule));
  p.schedule = schedule == "pingpong" ? Sm90Schedule::Pingpong : Sm90Schedule::Cooperative;
  p.rows_per_wg = static_cast<std::uint32_t>(a.integer("rows-per-wg", 1, 256));
  p.tile_n = static_cast<std::uint32_t>(a.integer("tile-n", 1, 256));
  p.stages = static_cast<std::uint32_t>(a.integer("stages", 0, kMaxStages));
  p.grid = static_cast<std::uint32_t>(a.integer("grid", 0, 1u << 16));
  p.raster = raster_arg(a);
  p.swizzle = static_cast<std::uint32_t>(a.integer("swizzle", 1, 8));
  p.tile_scheduler = a.text("tile-scheduler");
  p.warmup = static_cast<std::uint32_t>(a.integer("warmup", 0, 8));
  p.draws = static_cast<std::uint32_t>(a.integer("draws", 1, 99));
  p.producer_path_cycles = static_cast<Cycle>(a.integer("producer-path-cycles", 0, 1u << 20));
  p.consumer_path_cycles = static_cast<Cycle>(a.integer("consumer-path-cycles", 0, 1u << 20));
  p.l2_promotion = l2_promotion_arg(a);
  return p;
}

// A diagnostic log `path` (for command-line option `option`), opened with the twin's two heading
// lines: the clock the cycles are at, then `columns`.
std::FILE* open_log(const char* option, const std::string& path, double clock_ghz, const char* columns) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw InputError(fmt::format("{}: cannot write {}", option, path));
  fmt::print(f, "# clock_mhz,{:.0f}\n{}\n", clock_ghz * 1000, columns);
  return f;
}

}  // namespace

TensorMap sm90_operand_map(GmemAddr address, std::uint32_t k, std::uint32_t pitch, std::uint32_t rows,
                           std::uint32_t box_rows, L2Promotion promotion) {
  return TensorMap::tiled({.dtype = DataType::BF16, .address = address, .dims = {k, rows}, .strides = {pitch},
                           .box = {kSm90TileK, box_rows}, .swizzle = Swizzle::B128, .l2_promotion = promotion});
}

L2Promotion l2_promotion_arg(const KernelArgs& args) {
  const std::uint64_t promotion = args.integer("l2-promotion", 128, 256);
  if (promotion != 128 && promotion != 256)
    throw InputError(fmt::format("--l2-promotion: expected 128 or 256, got {}", promotion));
  return promotion == 128 ? L2Promotion::B128 : L2Promotion::B256;
}

Raster raster_arg(const KernelArgs& args) {
  const std::string& raster = args.text("raster");
  if (raster != "m" && raster != "n") throw InputError(fmt::format("--raster: expected m or n, got '{}'", raster));
  return raster == "n" ? Raster::AlongN : Raster::AlongM;
}

void write_tile_log(const std::string& path, const std::vector<TileStart>& starts, double clock_ghz, bool per_kblock) {
  std::FILE* f = open_log("--tile-log", path, clock_ghz,
                          per_kblock ? "cta,smid,j,tile,m,n,kb,start_ns,start_cycles" : "cta,smid,j,tile,m,n,start_ns,start_cycles");
  Cycle t0 = ~Cycle{0};
  for (const TileStart& s : starts) t0 = std::min(t0, s.cycle);
  std::vector<TileStart> rows = starts;
  std::sort(rows.begin(), rows.end(), [](const TileStart& x, const TileStart& y) {
    return std::tuple(x.cta, x.j, x.kb) < std::tuple(y.cta, y.j, y.kb);
  });
  for (const TileStart& s : rows) {
    fmt::print(f, "{},{},{},{},{},{},", s.cta, s.sm, s.j, s.tile, s.m, s.n);
    if (per_kblock) fmt::print(f, "{},", s.kb);
    fmt::print(f, "{:.0f},{}\n", static_cast<double>(s.cycle - t0) / clock_ghz, s.cycle - t0);
  }
  std::fclose(f);
}

namespace {

// The logged tiles by CTA, warpgroup and tile, as the twin writes them.
std::vector<TilePhases> in_tile_order(std::vector<TilePhases> rows) {
  std::sort(rows.begin(), rows.end(), [](const TilePhases& x, const TilePhases& y) {
    return std::tuple(x.cta, x.wg, x.j) < std::tuple(y.cta, y.wg, y.j);
  });
  return rows;
}

// The twin's --phase-log format: one row per consumer warpgroup's tile, cycles after the
// launch's first CTA start.
void write_phase_log(const std::string& path, const std::vector<TilePhases>& phases, double clock_ghz) {
  std::FILE* f = open_log("--phase-log", path, clock_ghz, "cta,wg,j,cta_start,ml_start,ml_end,epi_end");
  Cycle t0 = ~Cycle{0};
  for (const TilePhases& t : phases) t0 = std::min(t0, t.cta_start);
  for (const TilePhases& t : in_tile_order(phases))
    fmt::print(f, "{},{},{},{},{},{},{}\n", t.cta, t.wg, t.j, t.cta_start - t0, t.ml_start - t0, t.ml_end - t0,
               t.epi_end - t0);
  std::fclose(f);
}

// The twin's --chunk-log format: one row per epilogue chunk of each consumer warpgroup's tile; the
// tile's mainloop start after its CTA's start, then cycles after the tile's mainloop end.
void write_chunk_log(const std::string& path, const std::vector<TilePhases>& phases, double clock_ghz) {
  std::FILE* f = open_log("--chunk-log", path, clock_ghz, "cta,wg,j,ml_start,epi_start,chunk,waited,synced,staged,issued");
  auto after = [](Cycle t, Cycle from) { return static_cast<std::int64_t>(t) - static_cast<std::int64_t>(from); };
  for (const TilePhases& t : in_tile_order(phases))
    for (std::uint32_t i = 0; i < t.chunk_count; ++i) {
      const TilePhases::Chunk& c = t.chunks[i];
      fmt::print(f, "{},{},{},{},{},{},{},{},{},{}\n", t.cta, t.wg, t.j, after(t.ml_start, t.cta_start),
                 after(t.epi_start, t.ml_end), i, after(c.waited, t.ml_end), after(c.synced, t.ml_end),
                 after(c.staged, t.ml_end), after(c.issued, t.ml_end));
    }
  std::fclose(f);
}

KernelReport run_from_cli(const KernelRequest& req) {
  GemmSm90Params p = params_from(req.args);
  const std::string& tile_log = req.args.text("tile-log");
  const std::string& phase_log = req.args.text("phase-log");
  const std::string& chunk_log = req.args.text("chunk-log");
  p.log_tiles = !tile_log.empty();
  p.log_kblocks = req.args.integer("kb-log", 0, 1) != 0;
  p.log_phases = !phase_log.empty() || !chunk_log.empty();
  const GemmSm90Result r = run_gemm_sm90(req.config, req.options, p, req.check);
  if (p.log_tiles) write_tile_log(tile_log, r.tile_starts, req.config.clock_ghz, p.log_kblocks);
  if (!phase_log.empty()) write_phase_log(phase_log, r.tile_phases, req.config.clock_ghz);
  if (!chunk_log.empty()) write_chunk_log(chunk_log, r.tile_phases, req.config.clock_ghz);
  KernelReport rep;
  rep.kernel = "gemm_sm90";
  rep.problem = fmt::format("D(bf16) = A x B^T, M={} N={} K={} bf16, {} tile {}x{}x{}, {} stages, {} CTAs over {} "
                            "tiles, raster {}, swizzle {}",
                            p.m, p.n, p.k, p.schedule == Sm90Schedule::Pingpong ? "ping-pong" : "cooperative", r.tile_m,
                            p.tile_n, kTileK, r.stages, r.grid, r.tiles, p.raster == Raster::AlongM ? "M" : "N", p.swizzle);
  rep.run = r.run;
  rep.checked = r.checked;
  rep.check_passed = r.matches;
  rep.check_detail = r.checked ? r.detail : "not checked";
  const double seconds = static_cast<double>(r.run.cycles) / (req.config.clock_ghz * 1e9);
  rep.figures = {{"tflops", seconds > 0 ? r.flops / seconds / 1e12 : 0.0},
                 {"span_cycles", r.span},
                 {"draws", p.draws},
                 {"span_cycles_low", r.span_low()},
                 {"span_cycles_high", r.span_high()},
                 {"us", seconds * 1e6},
                 {"tiles", r.tiles},
                 {"stages", r.stages},
                 {"grid", r.grid},
                 {"tensor_busy_fraction", r.run.mma_busy_fraction()},
                 {"flops_per_cycle_per_sm",
                  r.run.cycles && r.run.sms_used ? r.flops / static_cast<double>(r.run.cycles) / r.run.sms_used : 0.0},
                 {"peak_flops_per_cycle_per_sm", req.config.wgmma.f16_flops_per_cycle}};
  return rep;
}

}  // namespace

KernelInfo gemm_sm90_kernel_info() {
  return KernelInfo{
      "gemm_sm90",
      "Hopper warp-specialized persistent GEMM (CUTLASS SM90 TMA WS cooperative / ping-pong): TMA producer "
      "warpgroup, two wgmma consumer warpgroups, register -> SMEM -> TMA store epilogue; the program of "
      "tools/calibration/gemm_sm90_twin.cu",
      {{"m", "rows of A and D", "512"},
       {"n", "rows of B, columns of D", "512"},
       {"k", "reduction length", "512"},
       {"schedule", "cooperative (both consumer warpgroups on one tile) or pingpong (alternate tiles)", "cooperative"},
       {"rows-per-wg", "rows of a tile per consumer warpgroup: 64 or 128 (tile M = 2x that when cooperative)", "64"},
       {"tile-n", "tile columns: 64, 128, 192 or 256", "256"},
       {"stages", "mainloop SMEM stages; 0: as many as fit", "0"},
       {"grid", "CTAs (persistent); 0: min(tiles, SMs)", "0"},
       {"tile-scheduler", "which tile each CTA computes next: " + tile_schedulers().names(), "static_persistent"},
       {"raster", "tile order: m (M fastest) or n", "m"},
       {"swizzle", "tiles per raster band: 1, 2, 4 or 8", "1"},
       {"warmup", "launches before the measured one (they leave the operands in the L2, as on hardware)", "0"},
       {"draws",
        fmt::format("measured launches after the warm-ups, each SM's start skewed within the {}-cycle dispatch spread "
                    "when more than one: the result is the upper median's (the twin's --reps)",
                    kDispatchSpreadCycles),
        "1"},
       {"producer-path-cycles", "the producer's own code per k-block, from its empty barrier's wait returning to the "
                                "k-block's loads (measured in the twin: GemmSm90.hpp)",
        std::to_string(kTwinProducerPathCycles)},
       {"consumer-path-cycles", "a consumer warpgroup's own code per k-block, from its full barrier's wait returning "
                                "to its first wgmma (measured in the twin: GemmSm90.hpp)",
        std::to_string(kTwinConsumerPathCycles)},
       {"l2-promotion", "the L2 promotion of A's and B's tensor maps in bytes: 256 or 128 (the twin's --promotion)",
        "256"},
       {"tile-log", "write when each CTA started each tile (its first loads) to FILE as CSV, as gemm_sm90_twin.cu "
                    "--tile-log does on hardware (tools/calibration/tile_drift.py compares them)", ""},
       {"kb-log", "1: --tile-log has a row for every k-block's loads (a kb column), as gemm_sm90_twin.cu --kb-log 1 "
                  "(tools/calibration/kb_joins.py reads them)", "0"},
       {"phase-log", "write each consumer warpgroup's mainloop start, mainloop end and epilogue end per tile to FILE "
                     "as CSV, as gemm_sm90_twin.cu --phase-log does on hardware", ""},
       {"chunk-log", "write each epilogue chunk's steps (wait_group.read, bar.syncs, TMA store) per consumer warpgroup's "
                     "tile to FILE as CSV, as gemm_sm90_twin.cu --chunk-log does on hardware", ""}},
      &run_from_cli};
}

}  // namespace bwsim
