#include "bwsim/kernels/TmaCopy.hpp"

#include <fmt/format.h>

#include <cstring>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/Pipeline.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kStageAlign = 1024;  // the 128B-swizzle atom; enough for every mode
constexpr std::byte kSentinel{0xCD};          // output bytes nothing may write

struct Layout {
  std::uint32_t stage_bytes = 0;
  std::uint32_t stages_base = 0;
  std::uint32_t smem_bytes = 0;
  SmemAddr stage(std::uint32_t i) const { return SmemAddr{stages_base + i * stage_bytes}; }
};

Layout make_layout(const TmaCopyParams& p, const TensorMap& in) {
  Layout l;
  l.stage_bytes = align_up(in.box_bytes(), kStageAlign);
  l.stages_base = align_up(PipelineBarriers::smem_bytes(p.stages), kStageAlign) + p.stage_offset;
  l.smem_bytes = l.stages_base + p.stages * l.stage_bytes;
  return l;
}

struct Kernel {
  const TmaCopyParams& p;
  const TensorMap& in;
  const TensorMap& out;
  Layout layout;
  std::uint32_t tiles_m, tiles_n;

  TensorCoords tile_coords(std::uint32_t t) const {
    return TensorCoords{static_cast<std::int32_t>((t % tiles_n) * p.box_cols),
                        static_cast<std::int32_t>((t / tiles_n) * p.box_rows)};
  }

  Task operator()(Warp& w) const {
    const PipelineTmaAsync pipe(SmemAddr{0}, {.stages = p.stages,
                                              .transaction_bytes = in.box_bytes(),
                                              .consumer_warps = p.consumers + 1,
                                              .name = "tiles"});
    const std::uint32_t tiles = tiles_m * tiles_n;
    const std::uint32_t first = w.cta_idx(), step = w.grid_ctas();
    if (w.warp_idx() == 0 && w.elect_one()) pipe.init(w);
    co_await w.syncthreads();

    if (w.warp_idx() == 0) {
      w.set_role("Producer");
      PipelineState st = make_producer_start_state(p.stages);
      for (std::uint32_t t = first; t < tiles; t += step) {
        co_await pipe.producer_acquire(w, st);
        w.tma_load(in, layout.stage(st.index), pipe.producer_get_barrier(st), tile_coords(t));
        ++st;
      }
      co_await pipe.producer_tail(w, st);
    } else if (w.warp_idx() == 1) {
      w.set_role("Store");
      PipelineState st = make_consumer_start_state(p.stages);
      for (std::uint32_t t = first; t < tiles; t += step) {
        co_await pipe.consumer_wait(w, st);
        w.tma_store(out, layout.stage(st.index), tile_coords(t));
        w.bulk_commit_group();
        co_await w.bulk_wait_group_read(0);  // the stage may be refilled once the store has read it
        pipe.consumer_release(w, st);
        ++st;
      }
      co_await w.bulk_wait_group(0);
    } else {
      w.set_role(fmt::format("Consumer {}", w.warp_idx() - 2));
      PipelineState st = make_consumer_start_state(p.stages);
      for (std::uint32_t t = first; t < tiles; t += step) {
        co_await pipe.consumer_wait(w, st);
        if (p.consume_cycles) co_await w.sleep(p.consume_cycles);
        pipe.consumer_release(w, st);
        ++st;
      }
    }
  }
};

std::string first_mismatch(const TmaCopyParams& p, std::uint32_t pitch, std::span<const std::byte> in,
                           std::span<const std::byte> out) {
  const std::uint32_t row_bytes = p.cols * size_of(p.dtype);
  for (std::uint32_t r = 0; r < p.rows; ++r)
    for (std::uint32_t b = 0; b < pitch; ++b) {
      const std::size_t i = static_cast<std::size_t>(r) * pitch + b;
      const std::byte want = b < row_bytes ? in[i] : kSentinel;
      if (out[i] != want)
        return fmt::format("row {}, byte {}: got {:#04x}, expected {:#04x}{}", r, b, static_cast<int>(out[i]),
                           static_cast<int>(want), b < row_bytes ? "" : " (padding past the last column was written)");
    }
  return {};
}

}  // namespace

TmaCopyResult run_tma_copy(const HardwareConfig& config, const SimOptions& options, const TmaCopyParams& p,
                           bool check) {
  if (p.stages < 1 || p.stages > 64) throw InputError(fmt::format("--stages must be in 1..64, got {}", p.stages));
  if (p.ctas < 1) throw InputError("--ctas must be at least 1");
  const std::uint32_t elem = size_of(p.dtype);
  const std::uint32_t pitch = p.row_pitch ? p.row_pitch : align_up(p.cols * elem, 16);
  if (pitch < p.cols * elem)
    throw InputError(fmt::format("--row-pitch {} is smaller than a row ({} bytes)", pitch, p.cols * elem));

  Simulator sim(config, options);
  const std::uint64_t bytes = static_cast<std::uint64_t>(pitch) * p.rows;
  const GmemAddr src = sim.gmem().alloc(bytes);
  const GmemAddr dst = sim.gmem().alloc(bytes);
  auto make_map = [&](GmemAddr a) {
    return TensorMap::tiled(TensorMapSpec{.dtype = p.dtype,
                                          .address = a,
                                          .dims = {p.cols, p.rows},
                                          .strides = {pitch},
                                          .box = {p.box_cols, p.box_rows},
                                          .elem_strides = {},
                                          .swizzle = p.swizzle,
                                          .oob_fill = OobFill::Zero});
  };
  const TensorMap in = make_map(src);
  const TensorMap out = make_map(dst);

  if (sim.gmem().holds_data()) {
    std::uint32_t x = 12345;
    for (std::byte& b : sim.gmem().bytes(src, bytes)) {
      x = x * 1664525u + 1013904223u;
      b = static_cast<std::byte>(x >> 24);
    }
    for (std::byte& b : sim.gmem().bytes(dst, bytes)) b = kSentinel;
  }

  const Kernel kernel{p, in, out, make_layout(p, in), (p.rows + p.box_rows - 1) / p.box_rows,
                      (p.cols + p.box_cols - 1) / p.box_cols};
  const LaunchConfig launch{.grid_ctas = p.ctas,
                            .block_threads = 32 * (2 + p.consumers),
                            .dynamic_smem_bytes = kernel.layout.smem_bytes};
  TmaCopyResult r;
  r.tiles = kernel.tiles_m * kernel.tiles_n;
  r.run = sim.launch("tma_copy", launch, [&kernel](Warp& w) { return kernel(w); });
  if (check && sim.gmem().holds_data()) {
    r.checked = true;
    r.mismatch = first_mismatch(p, pitch, sim.gmem().bytes(src, bytes), sim.gmem().bytes(dst, bytes));
    r.matches = r.mismatch.empty();
  }
  return r;
}

namespace {
KernelReport run_from_cli(const KernelRequest& req) {
  const KernelArgs& a = req.args;
  TmaCopyParams p;
  p.rows = static_cast<std::uint32_t>(a.integer("rows", 1, 1u << 20));
  p.cols = static_cast<std::uint32_t>(a.integer("cols", 1, 1u << 20));
  const auto dtype = parse_data_type(a.text("dtype"));
  if (!dtype) throw InputError(fmt::format("--dtype: unknown type '{}' (u8, u16, u32, f16, bf16, f32, ...)", a.text("dtype")));
  p.dtype = *dtype;
  p.box_rows = static_cast<std::uint32_t>(a.integer("box-rows", 1, 1u << 16));
  p.box_cols = static_cast<std::uint32_t>(a.integer("box-cols", 1, 1u << 16));
  p.stages = static_cast<std::uint32_t>(a.integer("stages", 1, 64));
  const auto sw = parse_swizzle(a.text("swizzle"));
  if (!sw) throw InputError(fmt::format("--swizzle: expected none, 32B, 64B or 128B, got '{}'", a.text("swizzle")));
  p.swizzle = *sw;
  p.consumers = static_cast<std::uint32_t>(a.integer("consumers", 0, 30));
  p.consume_cycles = a.integer("consume-cycles", 0, 1u << 30);
  p.ctas = static_cast<std::uint32_t>(a.integer("ctas", 1, 1u << 20));
  p.row_pitch = static_cast<std::uint32_t>(a.integer("row-pitch", 0, 1u << 30));
  p.stage_offset = static_cast<std::uint32_t>(a.integer("stage-offset", 0, 1u << 20));

  const TmaCopyResult r = run_tma_copy(req.config, req.options, p, req.check);
  KernelReport rep;
  rep.kernel = "tma_copy";
  rep.problem = fmt::format("{}x{} {}, box {}x{}, swizzle {}, {} stages, {} consumer warps, {} CTAs", p.rows, p.cols,
                            name_of(p.dtype), p.box_rows, p.box_cols, name_of(p.swizzle), p.stages, p.consumers, p.ctas);
  rep.run = r.run;
  rep.checked = r.checked;
  rep.check_passed = r.matches;
  rep.check_detail = r.checked ? (r.matches ? "output equals input byte for byte; padding untouched" : r.mismatch)
                               : "not checked";
  const double cycles = static_cast<double>(r.run.cycles);
  rep.figures = {{"tiles", r.tiles},
                 {"bytes_loaded", r.run.tma.load_bytes},
                 {"bytes_stored", r.run.tma.store_bytes},
                 {"load_bytes_per_cycle", cycles ? r.run.tma.load_bytes / cycles : 0.0},
                 {"tma_busy_fraction", r.run.tma_busy_fraction()}};
  return rep;
}
}  // namespace

KernelInfo tma_copy_kernel_info() {
  return KernelInfo{
      "tma_copy",
      "Pipelined TMA copy of a 2-D tensor: producer warp -> N-stage SMEM pipeline -> consumer warps and a TMA-store warp",
      {{"rows", "tensor rows", "1024"},
       {"cols", "tensor columns (contiguous)", "1024"},
       {"dtype", "element type: " + data_type_names({DataType::U8, DataType::U16, DataType::U32, DataType::F16,
                                                       DataType::BF16, DataType::F32}),
        "bf16"},
       {"box-rows", "TMA box rows", "64"},
       {"box-cols", "TMA box columns", "64"},
       {"stages", "SMEM pipeline stages", "4"},
       {"swizzle", "SMEM swizzle: none, 32B, 64B, 128B", "128B"},
       {"consumers", "consumer warps besides the store warp", "1"},
       {"consume-cycles", "cycles each consumer works on a tile", "0"},
       {"ctas", "CTAs in the grid (tiles are split round-robin)", "1"},
       {"row-pitch", "GMEM bytes between rows (0: packed, rounded up to 16)", "0"},
       {"stage-offset", "extra SMEM offset of the stage buffers", "0"}},
      &run_from_cli};
}

}  // namespace bwsim
