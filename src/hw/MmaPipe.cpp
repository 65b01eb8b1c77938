#include "bwsim/hw/MmaPipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "bwsim/hw/Cta.hpp"
#include "bwsim/hw/NumberFormats.hpp"

namespace bwsim {

std::uint32_t accumulator_lane(std::uint32_t m, std::uint32_t rows) {
  return rows == 64 ? (m / 16) * 32 + m % 16 : m;
}

MmaPipe::MmaPipe(SimContext& ctx, int sm_index, Tmem& tmem) : ctx_(ctx), sm_(sm_index), tmem_(tmem) {}

Cycle MmaPipe::math_cycles(const MmaInstr& in) const {
  const auto& c = ctx_.config.mma;
  const std::uint32_t rate = in.kind == MmaKind::F16    ? c.f16_flops_per_cycle
                             : in.kind == MmaKind::TF32 ? c.tf32_flops_per_cycle
                                                        : c.f8f6f4_flops_per_cycle;
  // The datapath processes 128 rows whatever M is: M = 64 takes the M = 128 time.
  const std::uint64_t flops = 2ull * 128 * in.f.n * mma_k(in.kind);
  return (flops + rate - 1) / rate;
}

Cycle MmaPipe::smem_cycles(const MmaInstr& in) const {
  constexpr std::uint32_t kBytesOfK = 32;  // every kind reads 32 bytes of K per row
  const std::uint64_t bytes = (in.a_from_tmem ? 0 : in.f.m * kBytesOfK) + in.f.n * kBytesOfK;
  const std::uint32_t bw = ctx_.config.mma.smem_bytes_per_cycle;
  return (bytes + bw - 1) / bw;
}

Cycle MmaPipe::latency(const MmaInstr& in) const {
  const auto& c = ctx_.config.mma;
  if (in.a_from_tmem) return c.latency_ts;
  return in.f.m == 64 ? c.latency_ss_m64 : c.latency_ss;
}

Cycle MmaPipe::reserve(Cycle at, Cycle interval) {
  const Cycle start = std::max(at + ctx_.config.mma.issue_cycles, free_at_);
  free_at_ = start + interval;
  return start;
}

template <class Instr>
void MmaPipe::schedule_execute(Cta& cta, const Instr& instr, Cycle start) {
  if (!ctx_.functional()) return;
  cta.async_begin();
  ctx_.engine.schedule(start, &MmaPipe::on_start<Instr>, this, pending(&instr).put(Pending<Instr>{instr, &cta}));
}

template <class Instr>
void MmaPipe::on_start(void* pipe, std::uint64_t slot) {
  auto& self = *static_cast<MmaPipe*>(pipe);
  const Pending<Instr> p = self.pending(static_cast<const Instr*>(nullptr)).take(slot);
  self.execute(p.instr, *p.cta);
  p.cta->async_end();
}

Cycle MmaPipe::issue(Cta& cta, WarpState& ws, const MmaInstr& in, Cycle at) {
  const Cycle math = math_cycles(in);
  const Cycle interval = std::max(math, smem_cycles(in));
  const Cycle start = reserve(at, interval);
  const Cycle done = start + math + latency(in);
  ++stats_.mmas;
  stats_.flops += 2.0 * in.f.m * in.f.n * mma_k(in.kind);
  stats_.busy_cycles += interval;
  if (Tracer* t = ctx_.tracer_for(sm_)) {
    const std::string name = fmt::format("mma.{} {}x{}x{} {}", in.a_from_tmem ? "ts" : "ss", in.f.m, in.f.n,
                                         mma_k(in.kind), name_of(in.f.a_type));
    const std::string args = fmt::format(R"("d_col":{},"accumulate":{},"warp":{},"issue":{},"done":{})",
                                         in.d.column(), in.accumulate, ws.index, at, done);
    t->span(sm_, kMmaTrack, name, start, interval, args);
    t->async_begin(sm_, "mma", "mma", next_id_, at, args);
    t->async_end(sm_, "mma", "mma", next_id_, done);
  }
  ++next_id_;
  schedule_execute(cta, in, start);
  return done;
}

Cycle MmaPipe::issue(Cta& cta, WarpState& ws, const TmemCopyInstr& in, Cycle at) {
  const std::uint32_t bytes = tmem_copy_rows(in.shape) * tmem_copy_columns(in.shape) * 4;
  const std::uint32_t bw = ctx_.config.mma.smem_bytes_per_cycle;
  const Cycle interval = (bytes + bw - 1) / bw;
  const Cycle start = reserve(at, interval);
  const Cycle done = start + interval + ctx_.config.tmem.access_latency;
  ++stats_.copies;
  stats_.copy_bytes += bytes;
  if (Tracer* t = ctx_.tracer_for(sm_))
    t->span(sm_, kMmaTrack, fmt::format("tcgen05.cp.{}", name_of(in.shape)), start, interval,
            fmt::format(R"("lane":{},"col":{},"smem":{},"warp":{},"issue":{},"done":{})", in.dst.lane(),
                        in.dst.column(), in.src.start_address, ws.index, at, done));
  schedule_execute(cta, in, start);
  return done;
}

// D[m][n] (+)= sum_k A[m][k] * B[n][k]: products of the narrow inputs are exact in fp32; the
// K products of one instruction are summed in fp32 in k order, then added to D.
void MmaPipe::execute(const MmaInstr& in, Cta& cta) {
  const std::uint32_t M = in.f.m, N = in.f.n, K = mma_k(in.kind);
  const std::uint32_t ea = size_of(in.f.a_type), eb = size_of(in.f.b_type);
  const float sa = in.f.negate_a ? -1.0f : 1.0f, sb = in.f.negate_b ? -1.0f : 1.0f;
  thread_local std::vector<float> a, b;
  a.resize(static_cast<std::size_t>(M) * K);
  b.resize(static_cast<std::size_t>(N) * K);
  Smem& smem = cta.smem();
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t k = 0; k < K; ++k) {
      float v;
      if (in.a_from_tmem) {
        // A in TMEM: row m in its accumulator lane, K packed into 32-bit columns, low bytes first.
        const std::uint32_t byte = k * ea;
        const std::uint32_t word =
            tmem_.cell(in.a_tmem.lane() + accumulator_lane(m, M), in.a_tmem.column() + byte / 4);
        const auto* bytes = reinterpret_cast<const std::byte*>(&word);
        v = load_as_float(in.f.a_type, bytes + byte % 4);
      } else {
        v = load_as_float(in.f.a_type, smem.bytes(operand_address(in.a, in.f.a_major, ea, m, k), ea).data());
      }
      a[m * K + k] = sa * v;
    }
  for (std::uint32_t n = 0; n < N; ++n)
    for (std::uint32_t k = 0; k < K; ++k)
      b[n * K + k] = sb * load_as_float(in.f.b_type, smem.bytes(operand_address(in.b, in.f.b_major, eb, n, k), eb).data());
  for (std::uint32_t m = 0; m < M; ++m) {
    const std::uint32_t lane = in.d.lane() + accumulator_lane(m, M);
    const float* ar = &a[m * K];
    for (std::uint32_t n = 0; n < N; ++n) {
      const float* br = &b[n * K];
      float sum = 0.0f;
      for (std::uint32_t k = 0; k < K; ++k) sum += ar[k] * br[k];
      std::uint32_t& cell = tmem_.cell(lane, in.d.column() + n);
      const float prev = in.accumulate ? std::bit_cast<float>(cell) : 0.0f;
      cell = std::bit_cast<std::uint32_t>(prev + sum);
    }
  }
}

// Row r's 32-bit words, read from the K-major canonical layout, land in the row's lanes.
void MmaPipe::execute(const TmemCopyInstr& in, Cta& cta) {
  Smem& smem = cta.smem();
  const std::uint32_t words = tmem_copy_columns(in.shape);
  for (std::uint32_t r = 0; r < tmem_copy_rows(in.shape); ++r) {
    const TmemCopyLanes lanes = tmem_copy_lanes(in.shape, r);
    for (std::uint32_t j = 0; j < words; ++j) {
      std::uint32_t v;
      std::memcpy(&v, smem.bytes(operand_address(in.src, Major::K, 4, r, j), 4).data(), 4);
      for (std::uint32_t i = 0; i < lanes.count; ++i) tmem_.cell(in.dst.lane() + lanes.lane[i], in.dst.column() + j) = v;
    }
  }
}

}  // namespace bwsim
