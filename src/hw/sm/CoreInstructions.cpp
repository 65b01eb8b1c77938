#include "bwsim/hw/sm/CoreInstructions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
    case CoreOp::Other: return CorePipe::kCount;
  }
  return CorePipe::kCount;
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

// Each window's use of each resource, then adjacent windows merged while their demands stay within
// kSegmentTolerance of the segment's, then the closest neighbours merged down to kMaxSegments.
template <class Use>
std::vector<CoreSegment> segments_of(const std::vector<Use>& uses, Cycle work) {
  const std::size_t windows = (work + kSegmentWindow - 1) / kSegmentWindow;
  std::vector<CoreDemand> used(windows, CoreDemand{});  // resource cycles per window
  for (const Use& u : uses)
    for (Cycle c = u.from; c < u.from + u.cycles;) {  // split at window edges
      const Cycle edge = (c / kSegmentWindow + 1) * kSegmentWindow, end = std::min(edge, u.from + u.cycles);
      used[c / kSegmentWindow][u.resource] += static_cast<double>(end - c);
      c = end;
    }
  struct Run {
    Cycle cycles;
    CoreDemand used;
    CoreDemand demand() const {
      CoreDemand d{};
      for (std::size_t k = 0; k < kCoreResources; ++k) d[k] = used[k] / static_cast<double>(cycles);
      return d;
    }
  };
  auto distance = [](const CoreDemand& a, const CoreDemand& b) {
    double most = 0;
    for (std::size_t k = 0; k < kCoreResources; ++k) most = std::max(most, std::abs(a[k] - b[k]));
    return most;
  };
  auto merged = [](const Run& a, const Run& b) {
    Run r{a.cycles + b.cycles, a.used};
    for (std::size_t k = 0; k < kCoreResources; ++k) r.used[k] += b.used[k];
    return r;
  };
  std::vector<Run> runs;
  for (std::size_t w = 0; w < windows; ++w) {
    const Run next{std::min(kSegmentWindow, work - w * kSegmentWindow), used[w]};
    if (!runs.empty() && distance(runs.back().demand(), next.demand()) <= kSegmentTolerance)
      runs.back() = merged(runs.back(), next);
    else
      runs.push_back(next);
  }
  while (runs.size() > kMaxSegments) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < runs.size(); ++i)
      if (distance(runs[i].demand(), runs[i + 1].demand()) < distance(runs[best].demand(), runs[best + 1].demand()))
        best = i;
    runs[best] = merged(runs[best], runs[best + 1]);
    runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  std::vector<CoreSegment> out;
  out.reserve(runs.size());
  for (const Run& r : runs) out.push_back({r.cycles, r.demand()});
  return out;
}

}  // namespace

Cycle pipe_occupancy(CorePipe pipe, const HardwareConfig& config, std::uint32_t work) {
  const std::uint32_t per_sub_partition = std::max(1u, lanes_of(pipe, config.pipes) / kSubPartitions);
  return std::max<Cycle>(config.warp.issue_cycles, (work + per_sub_partition - 1) / per_sub_partition);
}

Cycle pipe_occupancy(CoreOp op, const HardwareConfig& config) {
  if (op == CoreOp::Other) return config.warp.issue_cycles;
  return pipe_occupancy(pipe_of(op), config, op == CoreOp::Fma2 ? 64 : 32);
}

namespace {

// One sub-partition's issue slot and pipes as a lone block's instructions take them, in the order
// they are placed: when an instruction can issue (the slot, its pipe and the results it reads
// allow) and what taking it holds.
class IssueSlot {
 public:
  explicit IssueSlot(const HardwareConfig& config) : config_(config), issue_(config.warp.issue_cycles) {
    for (std::size_t op = 0; op < occupancy_.size(); ++op) occupancy_[op] = pipe_occupancy(static_cast<CoreOp>(op), config);
  }
  // `result[k]`: the cycle instruction k's result can be read (k as in `in.inputs`).
  Cycle earliest(const CoreInstr& in, const std::vector<Cycle>& result) const {
    const auto pipe = static_cast<std::size_t>(pipe_of(in.op));
    Cycle at = std::max(next_issue_, pipe < kCorePipes ? pipe_free_[pipe] : 0);
    for (std::uint32_t from : in.inputs)
      if (from != kNoInput) at = std::max(at, result[from]);
    return at;
  }
  struct Taken {
    Cycle ready;  // its result can be read
    Cycle held;   // cycles it holds its pipe (0 outside the pipes)
  };
  Taken take(const CoreInstr& in, Cycle at) {
    const auto pipe = static_cast<std::size_t>(pipe_of(in.op));
    next_issue_ = at + issue_;
    if (pipe >= kCorePipes) return {at + issue_, 0};  // an op outside the pipes: its result one issue slot later
    const Cycle held = occupancy_[static_cast<std::size_t>(in.op)];
    pipe_free_[pipe] = at + held;
    return {at + latency_of(pipe_of(in.op), config_.pipes), held};
  }
  Cycle issue_cycles() const { return issue_; }
  // When the slot and every pipe are free again.
  Cycle free() const { return std::max(next_issue_, *std::max_element(pipe_free_.begin(), pipe_free_.end())); }

 private:
  const HardwareConfig& config_;
  Cycle issue_;
  std::array<Cycle, kCoreOps> occupancy_{};
  std::array<Cycle, kCorePipes> pipe_free_{};
  Cycle next_issue_ = 0;
};

// Throws std::invalid_argument unless instruction i reads only earlier instructions.
void check_inputs(const CoreInstr& in, std::size_t i) {
  for (std::uint32_t from : in.inputs)
    if (from != kNoInput && from >= i)
      throw std::invalid_argument(fmt::format("instruction {} reads instruction {}, not an earlier one", i, from));
}

}  // namespace

CoreBlockProfile schedule_alone(std::span<const CoreInstr> code, const HardwareConfig& config) {
  CoreBlockProfile p;
  p.instructions = static_cast<std::uint32_t>(code.size());
  if (code.empty()) return p;
  IssueSlot slot(config);
  std::vector<Cycle> result(code.size());  // the cycle each instruction's result can be read
  Cycle done = 0;
  struct Use {
    std::size_t resource;
    Cycle from, cycles;
  };
  std::vector<Use> uses;  // every issue slot and pipe occupancy, for the segments
  uses.reserve(2 * code.size());
  for (std::size_t i = 0; i < code.size(); ++i) {
    const CoreInstr& in = code[i];
    if (in.op == CoreOp::Fma2 && !config.pipes.paired_fp32)
      throw ConfigError(fmt::format("{}: FFMA2/FADD2/FMUL2 need pipes.paired_fp32 (SM100); this config has none",
                                    config.source));
    check_inputs(in, i);
    const Cycle at = slot.earliest(in, result);
    const IssueSlot::Taken t = slot.take(in, at);
    uses.push_back({0, at, slot.issue_cycles()});
    if (t.held) {
      const auto pipe = static_cast<std::size_t>(pipe_of(in.op));
      p.pipe_cycles[pipe] += t.held;
      uses.push_back({pipe + 1, at, t.held});
    }
    result[i] = t.ready;
    done = std::max(done, result[i]);
  }
  p.issue_cycles = slot.issue_cycles() * code.size();
  p.work = slot.free();
  p.drain = done > p.work ? done - p.work : 0;
  p.segments = segments_of(uses, p.work);
  return p;
}

std::vector<CoreInstr> list_schedule(std::span<const CoreInstr> code, const HardwareConfig& config) {
  const std::size_t n = code.size();
  std::vector<std::uint32_t> placed_at(n, kNoInput);  // new index of each original instruction
  std::vector<Cycle> result(n);                        // by original index
  std::vector<std::uint32_t> waiting(n, 0);            // unplaced producers
  std::vector<std::vector<std::uint32_t>> readers(n);
  std::vector<std::uint32_t> ready;                     // placeable, by original index
  for (std::uint32_t i = 0; i < n; ++i) {
    check_inputs(code[i], i);
    for (std::uint32_t from : code[i].inputs)
      if (from != kNoInput) {
        ++waiting[i];
        readers[from].push_back(i);
      }
    if (waiting[i] == 0) ready.push_back(i);
  }
  IssueSlot slot(config);
  std::vector<CoreInstr> out;
  out.reserve(n);
  while (!ready.empty()) {
    std::size_t best = 0;
    Cycle best_at = 0;
    for (std::size_t k = 0; k < ready.size(); ++k) {
      const Cycle at = slot.earliest(code[ready[k]], result);
      if (k == 0 || at < best_at || (at == best_at && ready[k] < ready[best])) best = k, best_at = at;
    }
    const std::uint32_t i = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    result[i] = slot.take(code[i], best_at).ready;
    CoreInstr moved = code[i];
    for (std::uint32_t& from : moved.inputs)
      if (from != kNoInput) from = placed_at[from];
    placed_at[i] = static_cast<std::uint32_t>(out.size());
    out.push_back(moved);
    for (std::uint32_t r : readers[i])
      if (--waiting[r] == 0) ready.push_back(r);
  }
  return out;
}

}  // namespace bwsim
