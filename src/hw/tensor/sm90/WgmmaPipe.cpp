#include "bwsim/hw/tensor/sm90/WgmmaPipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/numeric/ProductSums.hpp"

namespace bwsim {

const StatGroup<WgmmaStats>& WgmmaStats::declared() {
  static const StatGroup<WgmmaStats> group = [] {
    StatGroup<WgmmaStats> g("wgmma");
    g.counter("mmas", StatUnit::Count, "wgmma.mma_async instructions (one per warpgroup)", &WgmmaStats::mmas)
        .counter("flops", StatUnit::Flop, "FLOP of the wgmma instructions (2 x 64 N K each)", &WgmmaStats::flops)
        .counter("f8_flops", StatUnit::Flop, "of flops, those with 8-bit (e4m3/e5m2) operands", &WgmmaStats::f8_flops)
        .formula("tflops", StatUnit::TflopsPerSecond, "flops per second at the config's clock",
                 [](const WgmmaStats& m, const StatContext& c) -> StatValue { return c.per_second(m.flops, 1e12); })
        .counter("busy_cycles", StatUnit::Cycles, "cycles the wgmma pipes were occupied", &WgmmaStats::busy_cycles);
    return g;
  }();
  return group;
}

Cycle WgmmaPipe::math_cycles(const WgmmaInstr& in) const {
  const auto& c = ctx_.config.wgmma;
  const std::uint32_t rate = size_of(in.shape.a_type) == 1 ? c.f8_flops_per_cycle : c.f16_flops_per_cycle;
  const std::uint64_t flops = 2ull * kWgmmaM * in.shape.n * wgmma_k(in.shape.a_type);
  return (flops + rate - 1) / rate;
}

std::uint64_t WgmmaPipe::smem_bytes(const WgmmaInstr& in) {
  constexpr std::uint32_t kBytesOfK = 32;  // every type reads 32 bytes of K per row
  return (in.a_from_regs ? 0 : kWgmmaM * kBytesOfK) + in.shape.n * kBytesOfK;
}

Cycle WgmmaPipe::smem_cycles(const WgmmaInstr& in) const {
  const std::uint32_t bw = ctx_.config.wgmma.smem_bytes_per_cycle;
  return (smem_bytes(in) + bw - 1) / bw;
}

Cycle WgmmaPipe::latency(const WgmmaInstr& in) const {
  return in.a_from_regs ? ctx_.config.wgmma.latency_rs : ctx_.config.wgmma.latency_ss;
}

WgmmaPipe::Timing WgmmaPipe::issue(const WgmmaInstr& in, Cycle at, std::uint32_t warp) {
  const Cycle math = math_cycles(in);
  const Cycle interval = std::max(math, smem_cycles(in));
  const Cycle start = std::max(at + ctx_.config.wgmma.issue_cycles, free_at_);
  free_at_ = start + interval;
  smem_.add(ctx_.now(), start, free_at_, static_cast<double>(smem_bytes(in)) / static_cast<double>(interval),
            SmemBackground::Source::Mma);
  const Cycle done = start + math + latency(in);
  ++stats_.mmas;
  const double flops = 2.0 * kWgmmaM * in.shape.n * wgmma_k(in.shape.a_type);
  stats_.flops += flops;
  if (size_of(in.shape.a_type) == 1) stats_.f8_flops += flops;
  stats_.busy_cycles += interval;
  if (Tracer* t = ctx_.tracer_for(sm_))
    t->span(sm_, kMmaTrack, fmt::format("wgmma.{} {}", in.a_from_regs ? "rs" : "ss", describe(in.shape)), start,
            interval, fmt::format(R"("scale_d":{},"warp":{},"issue":{},"done":{})", in.scale_d, warp, at, done));
  return Timing{start, done};
}

void WgmmaPipe::execute_at(Cta& cta, const WgmmaInstr& in, std::uint32_t warp_in_group,
                           const std::shared_ptr<std::vector<float>>& acc, const std::uint32_t* a_regs, Cycle at) {
  Pending p{in, &cta, warp_in_group, acc, a_regs != nullptr, {}};
  if (a_regs) std::copy(a_regs, a_regs + p.a_regs.size(), p.a_regs.begin());
  cta.async_begin();
  ctx_.engine.schedule(at, &WgmmaPipe::on_execute, this, pending_.put(p));
}

void WgmmaPipe::on_execute(void* pipe, std::uint64_t slot) {
  auto& self = *static_cast<WgmmaPipe*>(pipe);
  const Pending p = self.pending_.take(static_cast<std::uint32_t>(slot));
  self.execute(p);
  p.cta->async_end();
}

// Products of the narrow inputs are exact in fp32; the K products of one instruction are summed
// in fp32 in k order, then added to D (the hardware's order differs: no bit-exactness claimed).
void WgmmaPipe::execute(const Pending& p) const {
  const WgmmaInstr& in = p.instr;
  const std::uint32_t N = in.shape.n, K = wgmma_k(in.shape.a_type), regs = N / 2;
  const std::uint32_t ea = size_of(in.shape.a_type), eb = size_of(in.shape.b_type);
  const float sa = in.negate_a ? -1.0f : 1.0f, sb = in.negate_b ? -1.0f : 1.0f;
  Smem& smem = p.cta->smem();
  thread_local std::vector<float> a, bt, sums;
  a.assign(16 * K, 0.0f);
  bt.resize(static_cast<std::size_t>(K) * N);
  sums.resize(16 * static_cast<std::size_t>(N));
  for (std::uint32_t n = 0; n < N; ++n)
    for (std::uint32_t k = 0; k < K; ++k)
      bt[static_cast<std::size_t>(k) * N + n] =
          sb * load_as_float(in.shape.b_type, smem.bytes(operand_address(in.b, in.shape.b_major, eb, n, k), eb).data());
  const std::uint32_t row0 = 16 * p.warp_in_group;
  if (p.has_a_regs) {
    const std::uint32_t per_reg = 4 / ea;
    for (std::uint32_t lane = 0; lane < 32; ++lane)
      for (std::uint32_t e = 0; e < kWgmmaARegisters * per_reg; ++e) {
        const FragmentCoord c = wgmma_a_coord(in.shape.a_type, p.warp_in_group, lane, e);
        const std::uint32_t word = p.a_regs[lane * kWgmmaARegisters + e / per_reg];
        std::byte bytes[4];
        std::memcpy(bytes, &word, 4);
        a[(c.row - row0) * K + c.col] = sa * load_as_float(in.shape.a_type, bytes + (e % per_reg) * ea);
      }
  } else {
    for (std::uint32_t r = 0; r < 16; ++r)
      for (std::uint32_t k = 0; k < K; ++k)
        a[r * K + k] = sa * load_as_float(in.shape.a_type,
                                          smem.bytes(operand_address(in.a, in.shape.a_major, ea, row0 + r, k), ea).data());
  }
  product_sums(a.data(), 16, bt.data(), N, K, sums.data());
  for (std::uint32_t lane = 0; lane < 32; ++lane)
    for (std::uint32_t r = 0; r < regs; ++r) {
      const FragmentCoord c = wgmma_accumulator_coord(p.warp_in_group, lane, r);
      const float sum = sums[(c.row - row0) * N + c.col];
      float& d = (*p.acc)[lane * regs + r];
      d = in.scale_d ? d + sum : sum;
    }
}

}  // namespace bwsim
