// The SM90 warpgroup MMA of the Warp handle (wgmma.fence, wgmma.mma_async, commit_group,
// wait_group) and the accumulator fragments it writes. Operands are decoded and validated at
// issue, so a misuse is reported at the instruction that made it.
#include <fmt/format.h>

#include <algorithm>

#include "bwsim/hw/sm/Sm.hpp"
#include "bwsim/kernel/Warp.hpp"

namespace bwsim {

WgmmaAccumulator::WgmmaAccumulator(Warp& w, std::uint32_t n) : w_(w), n_(n) {
  const char* op = "wgmma accumulator";
  WarpState& ws = w.state();
  if (n < 8 || n > 256 || n % 8)
    w.cta().fail(Rule::WgmmaMisuse, ws, op, fmt::format("N = {} is not a wgmma shape", n),
                 "N is a multiple of 8 in 8..256");
  if (ws.accumulator_registers + registers() > ws.registers)
    w.cta().fail(Rule::WgmmaMisuse, ws, op,
                 fmt::format("{} more accumulator registers per thread on top of {} exceed the warp's {}", registers(),
                             ws.accumulator_registers, ws.registers),
                 "raise the warp's registers with setmaxnreg.inc first, or use a smaller tile");
  ws.accumulator_registers += registers();
  data_ = std::make_shared<std::vector<float>>(w.functional() ? 32 * static_cast<std::size_t>(registers()) : 0, 0.0f);
  touched_at_ = ws.wgmma_fences;
}

WgmmaAccumulator::~WgmmaAccumulator() { w_.state().accumulator_registers -= registers(); }

std::span<float> WgmmaAccumulator::values() {
  WarpState& ws = w_.state();
  if (written_group_ > ws.wgmma_retired)
    w_.cta().fail(Rule::RaceEarlyAccumulatorRead, ws, "wgmma accumulator access",
                  fmt::format("reads registers that a wgmma of commit group {} writes; wgmma.wait_group has retired "
                              "{} of the warp's groups",
                              written_group_ - 1, ws.wgmma_retired),
                  "commit the wgmmas and wgmma.wait_group until they are retired before touching the accumulators");
  touched_at_ = ws.wgmma_fences;
  return *data_;
}

void Warp::require_wgmma(const char* op) const {
  if (config().wgmma.f16_flops_per_cycle == 0)
    throw InputError(fmt::format("{}: the {} config has no wgmma (wgmma.f16_flops_per_cycle = 0; wgmma is SM90's); "
                                 "run this kernel on a Hopper config such as sim_configs/h100.yaml",
                                 op, config().name));
}

void Warp::wgmma_fence() {
  require_wgmma("wgmma.fence");
  issue(config().wgmma.issue_cycles);
  ++ws_.wgmma_fences;
}

void Warp::wgmma(WgmmaAccumulator& d, GmmaDescriptor a, GmmaDescriptor b, const WgmmaShape& shape, bool scale_d,
                 bool negate_a, bool negate_b) {
  issue_wgmma(d, &a, {}, b, shape, scale_d, negate_a, negate_b);
}

void Warp::wgmma(WgmmaAccumulator& d, std::span<const std::uint32_t> a, GmmaDescriptor b, const WgmmaShape& shape,
                 bool scale_d, bool negate_a, bool negate_b) {
  issue_wgmma(d, nullptr, a, b, shape, scale_d, negate_a, negate_b);
}

void Warp::issue_wgmma(WgmmaAccumulator& d, const GmmaDescriptor* a, std::span<const std::uint32_t> a_regs,
                       GmmaDescriptor b, const WgmmaShape& shape, bool scale_d, bool negate_a, bool negate_b) {
  const char* op = "wgmma.mma_async";
  require_wgmma(op);
  const std::uint32_t group = warpgroup_idx();
  if (num_warps() < 4 * (group + 1))
    cta_.fail(Rule::WgmmaMisuse, ws_, op,
              fmt::format("warpgroup {} has {} of its 4 warps in this CTA", group, num_warps() - 4 * group),
              "launch whole warpgroups (block size a multiple of 128) for wgmma");
  if (auto err = validate(shape)) cta_.fail(Rule::WgmmaMisuse, ws_, op, *err, "");
  if (&d.w_.state() != &ws_)
    cta_.fail(Rule::WgmmaMisuse, ws_, op, "the accumulator belongs to another warp", "each warp passes its own fragment");
  if (d.n() != shape.n)
    cta_.fail(Rule::WgmmaMisuse, ws_, op, fmt::format("the accumulator holds N = {}, the instruction is {}", d.n(),
                                                      describe(shape)), "");
  if (d.touched_at_ >= ws_.wgmma_fences)
    cta_.fail(Rule::WgmmaMisuse, ws_, op,
              "the accumulator was accessed (or created) after the warp's last wgmma.fence",
              "wgmma.fence between register accesses and the wgmma that uses the registers");
  if (!a && shape.a_major != Major::K)
    cta_.fail(Rule::WgmmaMisuse, ws_, op, "A in registers is K-major: its .trans-a immediate must be 0",
              "transpose A when loading it into registers, or take A from SMEM");
  if (!a && a_regs.size() != 32 * kWgmmaARegisters)
    cta_.fail(Rule::WgmmaMisuse, ws_, op,
              fmt::format("A in registers takes 32 lanes x {} registers, got {}", kWgmmaARegisters, a_regs.size()), "");

  WgmmaInstr in;
  in.shape = shape;
  in.a_from_regs = a == nullptr;
  in.scale_d = scale_d;
  in.negate_a = negate_a;
  in.negate_b = negate_b;
  const std::uint32_t K = wgmma_k(shape.a_type);
  auto operand = [&](GmmaDescriptor desc, const char* which) {
    GmmaDescriptorFields g;
    if (auto err = decode(desc, g)) cta_.fail(Rule::WgmmaMisuse, ws_, op, fmt::format("{}: {}", which, *err), "");
    return operand_fields(g);
  };
  SmemSpan a_span{};
  if (a) {
    in.a = operand(*a, "A operand");
    a_span = operand_span(in.a, shape.a_major, size_of(shape.a_type), kWgmmaM, K);
    check_operand_in_smem(a_span, "A operand", op);
  }
  in.b = operand(b, "B operand");
  const SmemSpan b_span = operand_span(in.b, shape.b_major, size_of(shape.b_type), shape.n, K);
  check_operand_in_smem(b_span, "B operand", op);
  const std::uint64_t commit_group = ws_.wgmma_committed + 1;
  cta_.race_check([&cta = cta_, &ws = ws_, a = a != nullptr, a_span, b_span, commit_group] {
    if (a) races::wgmma_operand(cta, ws, a_span.begin, a_span.end, "its A operand", commit_group);
    races::wgmma_operand(cta, ws, b_span.begin, b_span.end, "its B operand", commit_group);
  });

  const Cycle t = issue(config().wgmma.issue_cycles);
  WarpgroupWgmmas& issued = cta_.warpgroup_wgmmas(group);
  const std::uint64_t k = ws_.wgmma_issued++;
  const std::uint64_t a_raw = a ? a->raw : 0;
  WgmmaPipe::Timing timing;
  if (k == issued.first + issued.entries.size()) {
    timing = cta_.sm().wgmma().issue(in, t, ws_.index);
    issued.entries.push_back({in, a_raw, b.raw, timing, 1});
  } else {
    auto& e = issued.entries[k - issued.first];
    const bool same = e.instr.shape.n == shape.n && e.instr.shape.a_type == shape.a_type &&
                      e.instr.shape.b_type == shape.b_type && e.instr.shape.a_major == shape.a_major &&
                      e.instr.shape.b_major == shape.b_major && e.instr.a_from_regs == in.a_from_regs &&
                      e.a_raw == a_raw && e.b_raw == b.raw && e.instr.scale_d == scale_d &&
                      e.instr.negate_a == negate_a && e.instr.negate_b == negate_b;
    if (!same)
      cta_.fail(Rule::WgmmaMisuse, ws_, op,
                fmt::format("warpgroup {} disagrees on its wgmma #{}: another warp issued {} with descriptors "
                            "A {:#x} B {:#x}, this warp {} with A {:#x} B {:#x}",
                            group, k, describe(e.instr.shape), e.a_raw, e.b_raw, describe(shape), a_raw, b.raw),
                "every warp of the warpgroup executes the same wgmma sequence");
    timing = e.timing;
    // A warp that issues after the pipe started the instruction cannot see it done sooner than
    // the instruction's own time from its issue.
    const WgmmaPipe& pipe = cta_.sm().wgmma();
    timing.done = std::max(timing.done, t + config().wgmma.issue_cycles + pipe.math_cycles(in) + pipe.latency(in));
    ++e.warps;
    while (!issued.entries.empty() && issued.entries.front().warps == 4) {
      issued.entries.pop_front();
      ++issued.first;
    }
  }
  // This warp's rows are computed when the pipe starts the instruction, or once the warp has
  // issued it if it lags behind the first warp of its warpgroup.
  if (functional())
    cta_.sm().wgmma().execute_at(cta_, in, ws_.index % 4, d.data_, a ? nullptr : a_regs.data(),
                                 std::max(timing.start, ws_.ready));
  ws_.wgmma_open = true;
  ws_.wgmma_open_done = std::max(ws_.wgmma_open_done, timing.done);
  d.written_group_ = commit_group;
  if (cta_.tracer()) trace_op(fmt::format("wgmma {} -> done {}", describe(shape), timing.done), t, 1);
}

void Warp::wgmma_commit_group() {
  require_wgmma("wgmma.commit_group");
  const Cycle t = issue(config().wgmma.issue_cycles);
  // Groups retire in order: a group is complete once it and every older group are.
  const Cycle older = ws_.wgmma_pending.empty() ? 0 : ws_.wgmma_pending.back();
  ws_.wgmma_pending.push_back(std::max({older, t, ws_.wgmma_open ? ws_.wgmma_open_done : 0}));
  ws_.wgmma_open = false;
  ws_.wgmma_open_done = 0;
  ++ws_.wgmma_committed;
}

Warp::WaitAwaiter Warp::wgmma_wait_group(std::uint32_t pending_allowed) {
  require_wgmma("wgmma.wait_group");
  issue(config().wgmma.issue_cycles);
  Cycle until = 0;
  while (ws_.wgmma_pending.size() > pending_allowed) {
    until = std::max(until, ws_.wgmma_pending.front());
    ws_.wgmma_pending.pop_front();
    ++ws_.wgmma_retired;
  }
  cta_.race_check([&cta = cta_, &ws = ws_, retired = ws_.wgmma_retired] { races::wgmma_retired(cta, ws, retired); });
  return WaitAwaiter{ws_, WaitKind::Delay, kDelayWgmma, until > ws_.ready ? until - ws_.ready : 0};
}

}  // namespace bwsim
