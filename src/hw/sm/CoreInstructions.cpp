#include "bwsim/hw/sm/CoreInstructions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "bwsim/core/Error.hpp"

namespace bwsim {

CorePipe pipe_of(CoreOp op) {
  switch (op) {
    case CoreOp::Fma:
    case CoreOp::Fma2: return CorePipe::Fma;
    case CoreOp::Alu: return CorePipe::Alu;
    case CoreOp::Mufu: return CorePipe::Mufu;
    case CoreOp::Cvt: return CorePipe::Cvt;
  }
  return CorePipe::Fma;
}

namespace {

std::uint32_t lanes_of(CorePipe pipe, const HardwareConfig::Pipes& p) {
  const std::uint32_t lanes[] = {p.fma_lanes, p.alu_lanes, p.mufu_lanes, p.cvt_lanes};
  return lanes[static_cast<std::size_t>(pipe)];
}

Cycle latency_of(CorePipe pipe, const HardwareConfig::Pipes& p) {
  const std::uint32_t latency[] = {p.fma_latency, p.alu_latency, p.mufu_latency, p.cvt_latency};
  return latency[static_cast<std::size_t>(pipe)];
}

}  // namespace

Cycle pipe_occupancy(CoreOp op, const HardwareConfig& config) {
  const std::uint32_t per_sub_partition = std::max(1u, lanes_of(pipe_of(op), config.pipes) / kSubPartitions);
  const std::uint32_t work = op == CoreOp::Fma2 ? 64 : 32;
  return std::max<Cycle>(config.warp.issue_cycles, (work + per_sub_partition - 1) / per_sub_partition);
}

CoreBlockProfile schedule_alone(std::span<const CoreInstr> code, const HardwareConfig& config) {
  CoreBlockProfile p;
  p.instructions = static_cast<std::uint32_t>(code.size());
  if (code.empty()) return p;
  const Cycle issue = config.warp.issue_cycles;
  std::vector<Cycle> result(code.size());  // the cycle each instruction's result can be read
  std::array<Cycle, kCorePipes> pipe_free{};
  std::array<Cycle, static_cast<std::size_t>(CoreOp::Cvt) + 1> occupancy{};
  for (std::size_t op = 0; op < occupancy.size(); ++op) occupancy[op] = pipe_occupancy(static_cast<CoreOp>(op), config);
  Cycle next_issue = 0, done = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const CoreInstr& in = code[i];
    if (in.op == CoreOp::Fma2 && !config.pipes.paired_fp32)
      throw ConfigError(fmt::format("{}: FFMA2/FADD2/FMUL2 need pipes.paired_fp32 (SM100); this config has none",
                                    config.source));
    const auto pipe = static_cast<std::size_t>(pipe_of(in.op));
    Cycle at = std::max(next_issue, pipe_free[pipe]);
    for (std::uint32_t from : in.inputs) {
      if (from == kNoInput) continue;
      if (from >= i) throw std::invalid_argument(fmt::format("instruction {} reads instruction {}, not an earlier one", i, from));
      at = std::max(at, result[from]);
    }
    const Cycle held = occupancy[static_cast<std::size_t>(in.op)];
    pipe_free[pipe] = at + held;
    p.pipe_cycles[pipe] += held;
    next_issue = at + issue;
    result[i] = at + latency_of(pipe_of(in.op), config.pipes);
    done = std::max(done, result[i]);
  }
  p.issue_cycles = issue * code.size();
  p.work = std::max(next_issue, *std::max_element(pipe_free.begin(), pipe_free.end()));
  p.drain = done > p.work ? done - p.work : 0;
  p.demand[0] = static_cast<double>(p.issue_cycles) / static_cast<double>(p.work);
  for (std::size_t pipe = 0; pipe < kCorePipes; ++pipe)
    p.demand[pipe + 1] = static_cast<double>(p.pipe_cycles[pipe]) / static_cast<double>(p.work);
  return p;
}

}  // namespace bwsim
