#include "bwsim/kernels/TmaStream.hpp"

#include <fmt/format.h>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kRowBytes = 128;
constexpr std::uint32_t kStagesBase = 1024;  // after the barriers, 128B-swizzle aligned

void validate(const HardwareConfig& config, const TmaStreamParams& p) {
  if (p.box_bytes % kRowBytes != 0 || p.box_bytes / kRowBytes == 0 || p.box_bytes / kRowBytes > 256)
    throw InputError(fmt::format("--box-bytes {}: a multiple of 128 up to 32768 (1..256 rows of 128 bytes)", p.box_bytes));
  if (p.stages == 0 || p.stages > 64) throw InputError(fmt::format("--stages {}: 1..64", p.stages));
  if (kStagesBase + static_cast<std::uint64_t>(p.stages) * p.box_bytes > config.sm.max_smem_per_cta)
    throw InputError(fmt::format("--stages {} x --box-bytes {}: more SMEM than the {} bytes a CTA may have", p.stages,
                                 p.box_bytes, config.sm.max_smem_per_cta));
  if (p.loads == 0) throw InputError("--loads: at least 1");
  if (p.region_bytes % p.box_bytes != 0)
    throw InputError(fmt::format("--region-bytes {}: a multiple of the box ({} bytes), or 0", p.region_bytes, p.box_bytes));
}

}  // namespace

TmaStreamResult run_tma_stream(const HardwareConfig& config, const SimOptions& options, const TmaStreamParams& p) {
  validate(config, p);
  const std::uint32_t ctas = p.ctas ? p.ctas : config.sm.count;
  const std::uint32_t box_rows = p.box_bytes / kRowBytes;
  const std::uint64_t region_rows =
      p.region_bytes ? p.region_bytes / kRowBytes : static_cast<std::uint64_t>(p.loads) * box_rows;
  const std::uint64_t rows = region_rows * ctas;
  if (rows > (1ull << 31)) throw InputError("tma_stream: the tensor has more than 2^31 rows; use fewer loads or CTAs");
  Simulator sim(config, options);
  const GmemAddr base = sim.gmem().alloc(rows * kRowBytes);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = base, .dims = {kRowBytes, rows},
                                          .strides = {kRowBytes}, .box = {kRowBytes, box_rows},
                                          .swizzle = Swizzle::B128});
  auto program = [&](Warp& w) -> Task {
    w.set_role("TMA stream");
    auto bar = [&](std::uint32_t s) { return MBarrierRef{8 * s}; };
    for (std::uint32_t s = 0; s < p.stages; ++s) w.mbarrier_init(bar(s), 1);
    const std::uint64_t first = static_cast<std::uint64_t>(w.cta_idx()) * region_rows;
    for (std::uint32_t i = 0; i < p.loads + p.stages; ++i) {
      const std::uint32_t s = i % p.stages;
      if (i >= p.stages) co_await w.mbarrier_wait(bar(s), ((i - p.stages) / p.stages) & 1u);
      if (i < p.loads) {
        w.mbarrier_arrive_expect_tx(bar(s), p.box_bytes);
        const std::uint64_t row = first + static_cast<std::uint64_t>(i) * box_rows % region_rows;
        w.tma_load(map, SmemAddr{kStagesBase + s * p.box_bytes}, bar(s), {0, static_cast<std::int32_t>(row)});
      }
    }
  };
  TmaStreamResult r;
  r.run = sim.launch("tma_stream",
                     LaunchConfig{.grid_ctas = ctas, .block_threads = 32,
                                  .dynamic_smem_bytes = kStagesBase + p.stages * p.box_bytes},
                     program);
  r.bytes = static_cast<std::uint64_t>(ctas) * p.loads * p.box_bytes;
  r.bytes_per_cycle = r.run.cycles ? static_cast<double>(r.bytes) / static_cast<double>(r.run.cycles) : 0.0;
  return r;
}

namespace {
KernelReport run_from_cli(const KernelRequest& req) {
  const KernelArgs& a = req.args;
  TmaStreamParams p;
  p.ctas = static_cast<std::uint32_t>(a.integer("ctas", 0, 1u << 16));
  p.box_bytes = static_cast<std::uint32_t>(a.integer("box-bytes", 128, 32768));
  p.stages = static_cast<std::uint32_t>(a.integer("stages", 1, 64));
  p.loads = static_cast<std::uint32_t>(a.integer("loads", 1, 1u << 24));
  p.region_bytes = static_cast<std::uint32_t>(a.integer("region-bytes", 0, 1u << 30));
  const TmaStreamResult r = run_tma_stream(req.config, req.options, p);
  KernelReport rep;
  rep.kernel = "tma_stream";
  const std::uint32_t ctas = p.ctas ? p.ctas : req.config.sm.count;
  rep.problem = fmt::format("{} CTA{} x {} TMA loads of {} bytes, {} in flight each, {}", ctas, ctas == 1 ? "" : "s",
                            p.loads, p.box_bytes, p.stages,
                            p.region_bytes ? fmt::format("cycling through {} bytes per CTA", p.region_bytes)
                                           : std::string("every load new data"));
  rep.run = r.run;
  const double seconds = static_cast<double>(r.run.cycles) / (req.config.clock_ghz * 1e9);
  rep.figures = {{"loaded_bytes", r.bytes},
                 {"bytes_per_cycle", r.bytes_per_cycle},
                 {"bytes_per_cycle_per_cta", r.bytes_per_cycle / ctas},
                 {"gbytes_per_second", seconds > 0 ? static_cast<double>(r.bytes) / seconds / 1e9 : 0.0}};
  return rep;
}
}  // namespace

KernelInfo tma_stream_kernel_info() {
  return KernelInfo{"tma_stream",
                    "TMA loads only (a bandwidth microbenchmark): each CTA's thread keeps --stages boxes in flight, "
                    "reading new data (HBM) or cycling through --region-bytes of its own (L2)",
                    {{"ctas", "CTAs; 0: one per SM", "0"},
                     {"box-bytes", "bytes per load: 128-byte rows, up to 32768", "32768"},
                     {"stages", "loads in flight per CTA", "4"},
                     {"loads", "loads per CTA", "256"},
                     {"region-bytes", "bytes each CTA cycles through (L2-resident); 0: new data every load", "0"}},
                    &run_from_cli};
}

}  // namespace bwsim
