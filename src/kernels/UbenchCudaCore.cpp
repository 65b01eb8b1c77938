// The CUDA-core microbenchmarks of tools/calibration/h100_cudacore.cu as bwsim programs: one CTA of
// 4 x W warps (W per sub-partition), every warp running the same loop of straight-line code; the
// value is the CTA's span over the timed loop, per instruction (x 100) or per row tile. The unit
// loops are written with CoreBlock as the .cu writes them; the softmax twin runs the compiled loop
// body itself, read from tools/calibration/softmax_sass.txt (sm_90a).
#include <algorithm>
#include <array>
#include <vector>

#include "bwsim/kernel/SassBlock.hpp"
#include "bwsim/kernels/Ubench.hpp"

namespace bwsim {

extern const char* const kSoftmaxSassListing;  // tools/calibration/softmax_sass.txt, built in (CMakeLists.txt)

namespace {

// The span from the first warp's start to the last warp's end of `iterations` runs of `block` by
// `warps` warps (warp w on sub-partition w % 4), after `warmup` runs.
Cycle loop_span(const HardwareConfig& c, const CoreBlock& block, std::uint32_t warps, std::uint32_t iterations,
                std::uint32_t warmup) {
  std::vector<Cycle> start(warps), end(warps);
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  sim.launch("ubench", LaunchConfig{.grid_ctas = 1, .block_threads = 32 * warps, .dynamic_smem_bytes = 1024},
             [&](Warp& w) -> Task {
               co_await w.syncthreads();
               for (std::uint32_t i = 0; i < warmup; ++i) co_await w.run(block);
               start[w.warp_idx()] = w.now();
               for (std::uint32_t i = 0; i < iterations; ++i) co_await w.run(block);
               end[w.warp_idx()] = w.now();
             });
  return *std::max_element(end.begin(), end.end()) - *std::min_element(start.begin(), start.end());
}

// `chains` independent chains of `op`, `depth` deep, interleaved (chain 0, 1, ..., then again).
CoreBlock chains(const HardwareConfig& c, CoreOp op, std::uint32_t count, std::uint32_t depth) {
  CoreBlock b("chains");
  std::vector<CoreBlock::Value> last(count);
  for (std::uint32_t d = 0; d < depth; ++d)
    for (CoreBlock::Value& v : last) v = b.op(op, {v});
  b.finish(c);
  return b;
}

// One warp, one chain: cycles per instruction x 100.
UbenchScenario latency(const char* name, CoreOp op) {
  return {name, UbenchParam::Ignored, [op](const HardwareConfig& c, std::uint32_t) {
            constexpr std::uint32_t kChain = 4096;
            const Cycle span = loop_span(c, chains(c, op, 1, kChain), 1, 1, 0);
            return static_cast<std::int64_t>(100.0 * static_cast<double>(span) / kChain + 0.5);
          }};
}

// 8 chains per thread, 512 instructions per iteration, 512 / W iterations: cycles per warp
// instruction per sub-partition x 100.
UbenchScenario throughput(const char* name, CoreOp op) {
  return {name, UbenchParam::WarpsPerSubPartition, [op](const HardwareConfig& c, std::uint32_t w) {
            const CoreBlock b = chains(c, op, 8, 64);
            const std::uint32_t iterations = 512 / w;
            const Cycle span = loop_span(c, b, 4 * w, iterations, 1);
            return static_cast<std::int64_t>(100.0 * static_cast<double>(span) / (512.0 * iterations * w) + 0.5);
          }};
}

// 42 steps of 8 FFMA chains and 4 LOP3 chains (504 instructions), 512 / W iterations: cycles per
// warp instruction per sub-partition x 100.
UbenchScenario issue_mix(const char* name) {
  return {name, UbenchParam::WarpsPerSubPartition, [](const HardwareConfig& c, std::uint32_t w) {
            CoreBlock b("issue mix");
            std::array<CoreBlock::Value, 8> fma{};
            std::array<CoreBlock::Value, 4> alu{};
            for (int step = 0; step < 42; ++step)  // FFMA, FFMA, LOP3, as ptxas interleaves them
              for (std::size_t k = 0; k < alu.size(); ++k) {
                fma[2 * k] = b.fma({fma[2 * k]});
                fma[2 * k + 1] = b.fma({fma[2 * k + 1]});
                alu[k] = b.alu({alu[k]});
              }
            b.finish(c);
            const std::uint32_t iterations = 512 / w;
            const Cycle span = loop_span(c, b, 4 * w, iterations, 1);
            return static_cast<std::int64_t>(100.0 * static_cast<double>(span) / (504.0 * iterations * w) + 0.5);
          }};
}

// The twin: the compiled row tile of k_softmax<poly, W>, 4 warm-up and 256 timed tiles per warp;
// cycles per tile (all warps).
UbenchScenario softmax(const char* name, bool poly) {
  return {name, UbenchParam::WarpsPerSubPartition, [poly](const HardwareConfig& c, std::uint32_t w) {
            const std::string header = fmt::format("== sm_90a k_softmax<{};{}>", poly ? "true" : "false", w);
            const std::string listing = sass_listing_section(kSoftmaxSassListing, header);
            const CoreBlock b = sass_block(header.substr(3), listing, c);
            constexpr std::uint32_t kTiles = 256;
            return static_cast<std::int64_t>(static_cast<double>(loop_span(c, b, 4 * w, kTiles, 4)) / kTiles + 0.5);
          }};
}

}  // namespace

std::vector<UbenchScenario> cuda_core_scenarios() {
  return {latency("ffma_dependent_latency_x100", CoreOp::Fma),
          latency("mufu_ex2_dependent_latency_x100", CoreOp::Mufu),
          latency("fmnmx_dependent_latency_x100", CoreOp::Alu),
          latency("fadd_dependent_latency_x100", CoreOp::Fma),
          latency("f2fp_dependent_latency_x100", CoreOp::Cvt),
          throughput("ffma_throughput_x100", CoreOp::Fma),
          throughput("mufu_ex2_throughput_x100", CoreOp::Mufu),
          throughput("fmnmx_throughput_x100", CoreOp::Alu),
          throughput("fadd_throughput_x100", CoreOp::Fma),
          throughput("f2fp_throughput_x100", CoreOp::Cvt),
          issue_mix("issue_mix_2ffma_1alu_x100"),
          softmax("softmax_row_tile_cycles", false),
          softmax("softmax_poly_half_row_tile_cycles", true)};
}

}  // namespace bwsim
