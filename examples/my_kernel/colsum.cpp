#include "colsum.hpp"

#include <bwsim/core/Error.hpp>
#include <bwsim/kernel/Pipeline.hpp>

#include <cstring>
#include <string>

namespace colsum {
namespace {

constexpr std::uint32_t kTileBytes = kTileRows * kCols * 4;
constexpr std::uint32_t kStagesBase = 1024;  // after the barriers, 1 KiB aligned

bwsim::SmemAddr stage(std::uint32_t i) { return bwsim::SmemAddr{kStagesBase + i * kTileBytes}; }

}  // namespace

Result run(const bwsim::HardwareConfig& config, const bwsim::SimOptions& options, const Params& p) {
  using namespace bwsim;
  if (p.rows == 0 || p.rows % kTileRows) throw InputError("--rows: a positive multiple of 32");
  if (p.stages < 1 || p.stages > 8) throw InputError("--stages: 1..8");
  Simulator sim(config, options);
  const std::uint64_t bytes = std::uint64_t{p.rows} * kCols * 4;
  const GmemAddr a = sim.gmem().alloc(bytes);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::F32, .address = a, .dims = {kCols, p.rows},
                                          .strides = {kCols * 4}, .box = {kCols, kTileRows}});
  Result r;
  r.sums.assign(kCols, 0.0);
  r.expected.assign(kCols, 0.0);
  if (sim.gmem().holds_data()) {  // small integers: the sums are exact in any order
    std::vector<float> host(std::size_t{p.rows} * kCols);
    for (std::size_t i = 0; i < host.size(); ++i) {
      host[i] = static_cast<float>((i * 2654435761u) % 97);
      r.expected[i % kCols] += host[i];
    }
    std::memcpy(sim.gmem().bytes(a, bytes).data(), host.data(), bytes);
  }
  const std::uint32_t tiles = p.rows / kTileRows;
  auto kernel = [&](Warp& w) -> Task {
    const PipelineTmaAsync pipe(SmemAddr{0}, {.stages = p.stages, .transaction_bytes = kTileBytes, .name = "tiles"});
    if (w.warp_idx() == 0 && w.elect_one()) pipe.init(w);
    co_await w.syncthreads();
    if (w.warp_idx() == 0) {
      w.set_role("Producer");
      PipelineState st = make_producer_start_state(p.stages);
      for (std::uint32_t t = 0; t < tiles; ++t, ++st) {
        co_await pipe.producer_acquire(w, st);
        w.tma_load(map, stage(st.index), pipe.producer_get_barrier(st), {0, static_cast<std::int32_t>(t * kTileRows)});
      }
      co_await pipe.producer_tail(w, st);
    } else {
      w.set_role("Consumer");
      PipelineState st = make_consumer_start_state(p.stages);
      std::vector<std::byte> tile(kTileBytes);
      for (std::uint32_t t = 0; t < tiles; ++t, ++st) {
        co_await pipe.consumer_wait(w, st);
        if (p.early_release) pipe.consumer_release(w, st);
        w.ld_shared(stage(st.index), tile);
        if (w.functional())
          for (std::uint32_t i = 0; i < kTileRows * kCols; ++i) {
            float v;
            std::memcpy(&v, tile.data() + 4 * i, 4);
            r.sums[i % kCols] += v;
          }
        co_await w.sleep(p.work_cycles);
        if (!p.forget_release && !p.early_release) pipe.consumer_release(w, st);
      }
    }
  };
  r.run = sim.launch("colsum", LaunchConfig{.grid_ctas = 1, .block_threads = 64,
                                            .dynamic_smem_bytes = kStagesBase + p.stages * kTileBytes},
                     kernel);
  return r;
}

bwsim::KernelInfo kernel_info() {
  return {"colsum",
          "column sums of a rows x 64 f32 matrix: a TMA producer warp, a consumer warp, a ring of SMEM stages",
          {{"rows", "matrix rows, a multiple of 32", "1024"},
           {"stages", "SMEM stages, 1..8", "2"},
           {"work-cycles", "the consumer's cycles per tile", "200"},
           {"forget-release", "a bug: the consumer never releases a stage (the producer waits forever)", "0", true},
           {"early-release", "a bug: the consumer releases each stage before reading it", "0", true}},
          [](const bwsim::KernelRequest& req) {
            const bwsim::KernelArgs& a = req.args;
            const Params p{.rows = static_cast<std::uint32_t>(a.integer("rows", 32, 1u << 24)),
                           .stages = static_cast<std::uint32_t>(a.integer("stages", 1, 8)),
                           .work_cycles = a.integer("work-cycles", 0, 1u << 20),
                           .forget_release = a.flag("forget-release"),
                           .early_release = a.flag("early-release")};
            const Result r = run(req.config, req.options, p);
            bwsim::KernelReport rep;
            rep.kernel = "colsum";
            rep.problem = std::to_string(p.rows) + " x 64 f32, " + std::to_string(p.stages) + " stages";
            rep.run = r.run;
            if (req.check && req.options.mode == bwsim::Mode::Functional) {
              rep.checked = true;
              rep.check_passed = r.sums == r.expected;
              rep.check_detail = rep.check_passed ? "the 64 sums equal the CPU's" : "a column sum differs from the CPU's";
            }
            return rep;
          }};
}

}  // namespace colsum
