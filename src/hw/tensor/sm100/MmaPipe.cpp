#include "bwsim/hw/tensor/sm100/MmaPipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Cta.hpp"
#include "bwsim/hw/sm/Sm.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/numeric/ProductSums.hpp"
#include "bwsim/hw/tensor/sm100/SparseMetadata.hpp"

namespace bwsim {

std::uint32_t accumulator_lane(std::uint32_t m, std::uint32_t rows) {
  return rows == 64 ? (m / 16) * 32 + m % 16 : m;
}

std::string_view name_of(CollectorOp op) {
  switch (op) {
    case CollectorOp::Discard: return "discard";
    case CollectorOp::Fill: return "fill";
    case CollectorOp::Use: return "use";
    case CollectorOp::LastUse: return "lastuse";
  }
  return "?";
}

TmemCell accumulator_cell(const MmaInstr& in, std::uint32_t m, std::uint32_t n) {
  if (in.ws) {
    const std::uint32_t cols = in.d_columns();  // N / (128 / M)
    return {m + in.f.m * (n / cols), n % cols};
  }
  if (!in.pair) return {accumulator_lane(m, in.f.m), n};
  if (in.f.m == 256) return {m, n};  // Layout A: each CTA's 128 rows in its 128 lanes
  const std::uint32_t half = in.f.n / 2;  // Layout B: 64 rows per CTA, N folded over two lane halves
  return {m + 64 * (n / half), n % half};
}

std::uint32_t accumulator_run(const MmaInstr& in) {
  if (in.ws) return in.d_columns();
  if (!in.pair || in.f.m == 256) return in.f.n;
  return in.f.n / 2;
}

TmemCell scale_a_cell(std::uint32_t m) { return {m % kTmemLanes, m / 32}; }
TmemCell scale_b_cell(std::uint32_t n) { return {n % 32, n / 32}; }

std::uint32_t mma_flops_per_cycle(const HardwareConfig& config, MmaKind kind) {
  const auto& c = config.mma;
  switch (kind) {
    case MmaKind::F16: return c.f16_flops_per_cycle;
    case MmaKind::TF32: return c.tf32_flops_per_cycle;
    case MmaKind::I8: return c.i8_ops_per_cycle;
    case MmaKind::MXF4:
    case MmaKind::MXF4NVF4: return c.f4_flops_per_cycle;
    case MmaKind::F8F6F4:
    case MmaKind::MXF8F6F4: return c.f8f6f4_flops_per_cycle;
  }
  return c.f16_flops_per_cycle;
}

const StatGroup<MmaStats>& MmaStats::declared() {
  static const StatGroup<MmaStats> group = [] {
    StatGroup<MmaStats> g("mma");
    g.counter("mmas", StatUnit::Count, "tcgen05.mma instructions (a cta_group::2 one once)", &MmaStats::mmas)
        .counter("flops", StatUnit::Flop, "useful FLOP of the tcgen05.mma instructions (2 M N K each; .sp: the logical K)", &MmaStats::flops)
        .counter("f8_flops", StatUnit::Flop, "of flops, those of kind::f8f6f4 and kind::mxf8f6f4 instructions",
                 &MmaStats::f8_flops)
        .counter("f4_flops", StatUnit::Flop, "of flops, those of kind::mxf4 and kind::mxf4nvf4 instructions",
                 &MmaStats::f4_flops)
        .counter("int_ops", StatUnit::Flop, "of flops, the integer operations of kind::i8 instructions",
                 &MmaStats::int_ops)
        .formula("tflops", StatUnit::TflopsPerSecond, "flops per second at the config's clock",
                 [](const MmaStats& m, const StatContext& c) -> StatValue { return c.per_second(m.flops, 1e12); })
        .counter("busy_cycles", StatUnit::Cycles, "cycles the tcgen05 pipes were occupied", &MmaStats::busy_cycles)
        .counter("copies", StatUnit::Count, "tcgen05.cp instructions", &MmaStats::copies)
        .counter("copy_bytes", StatUnit::Bytes, "bytes tcgen05.cp copied from SMEM into TMEM", &MmaStats::copy_bytes)
        .counter("shifts", StatUnit::Count, "tcgen05.shift instructions", &MmaStats::shifts);
    return g;
  }();
  return group;
}

MmaPipe::MmaPipe(SimContext& ctx, int sm_index, Tmem& tmem) : ctx_(ctx), sm_(sm_index), tmem_(tmem) {}

// Per SM. cta_group::1: the datapath processes 128 rows whatever M is (M = 64 takes the M = 128
// time). cta_group::2: each SM computes its M/2 rows at the full rate (HF §2.2: M = 128 over a
// pair has II N/4, M = 256 N/2).
// .ws folds D over all 128 lanes, so its M rows take M / 128 of the M = 128 time (an estimate:
// no measurement of .ws exists).
Cycle MmaPipe::math_cycles(const MmaInstr& in) const {
  const std::uint32_t rate = mma_flops_per_cycle(ctx_.config, in.kind);
  const std::uint32_t rows = in.ws ? in.f.m : in.pair ? in.f.m / 2 : 128;
  const std::uint64_t flops = 2ull * rows * in.f.n * mma_k(in.kind);
  return (flops + rate - 1) / rate;
}

// Per SM: its rows of A (unless in TMEM) and of B, 32 bytes of K each; a pair splits both.
Cycle MmaPipe::smem_cycles(const MmaInstr& in) const {
  constexpr std::uint32_t kBytesOfK = 32;  // every kind reads 32 bytes of K per row
  const std::uint32_t split = in.pair ? 2 : 1;
  const std::uint64_t bytes =
      (in.a_from_tmem ? 0 : in.f.m / split * kBytesOfK) +
      (in.b_from_collector() ? 0 : in.f.n / split * kBytesOfK * (in.sp ? 2 : 1));
  const std::uint32_t bw = ctx_.config.mma.smem_bytes_per_cycle;
  return (bytes + bw - 1) / bw;
}

Cycle MmaPipe::latency(const MmaInstr& in) const {
  const auto& c = ctx_.config.mma;
  return pipe_latency(in) + (in.block_scale ? c.block_scale_latency : 0);
}

Cycle MmaPipe::pipe_latency(const MmaInstr& in) const {
  const auto& c = ctx_.config.mma;
  if (in.pair) {
    if (in.a_from_tmem) return in.f.m == 128 ? c.latency_2cta_ts_m128 : c.latency_2cta_ts;
    return in.f.m == 128 ? c.latency_2cta_ss_m128 : c.latency_2cta_ss;
  }
  if (in.a_from_tmem) return c.latency_ts;
  return in.f.m == 64 && !in.ws ? c.latency_ss_m64 : c.latency_ss;  // .ws: the SS latency (not measured)
}

Cycle MmaPipe::reserve(Cycle at, Cycle interval, MmaPipe* peer) {
  Cycle start = std::max(at + ctx_.config.mma.issue_cycles, free_at_);
  if (peer) start = std::max(start, peer->free_at_);
  free_at_ = start + interval;
  if (peer) {
    ctx_.couple_at(Coupling::Cluster, start);  // the pair's peer pipe is reserved from `start`
    peer->free_at_ = free_at_;
    peer->stats_.busy_cycles += interval;
  }
  return start;
}

template <class Instr>
void MmaPipe::schedule_execute(Cta& cta, WarpState& ws, const Instr& instr, Cycle start) {
  if (!ctx_.functional()) return;
  cta.async_begin();
  ctx_.engine.schedule(start, &MmaPipe::on_start<Instr>, this, pending(&instr).put(Pending<Instr>{instr, &cta, &ws}));
}

template <class Instr>
void MmaPipe::on_start(void* pipe, std::uint64_t slot) {
  auto& self = *static_cast<MmaPipe*>(pipe);
  const Pending<Instr> p = self.pending(static_cast<const Instr*>(nullptr)).take(slot);
  self.execute(p.instr, *p.cta, *p.ws);
  p.cta->async_end();
}

MmaCost MmaPipe::cost(const MmaInstr& in) const {
  const Cycle math = math_cycles(in);
  return {.math = math,
          .interval = std::max(math, smem_cycles(in)),
          .latency = latency(in),
          .flops = 2.0 * in.f.m * in.f.n * in.logical_k()};  // .sp: the logical K, as vendors count
}

Cycle MmaPipe::issue(Cta& cta, WarpState& ws, const MmaInstr& in, const MmaCost& cost, Cycle at) {
  MmaPipe* peer = in.pair ? &cta.cluster().cta(cta.rank() + 1).sm().mma() : nullptr;
  const Cycle start = reserve(at, cost.interval, peer);
  const Cycle done = start + cost.math + cost.latency;
  ++stats_.mmas;
  stats_.flops += cost.flops;
  if (in.kind == MmaKind::F8F6F4 || in.kind == MmaKind::MXF8F6F4) stats_.f8_flops += cost.flops;
  if (in.kind == MmaKind::MXF4 || in.kind == MmaKind::MXF4NVF4) stats_.f4_flops += cost.flops;
  if (in.kind == MmaKind::I8) stats_.int_ops += cost.flops;
  stats_.busy_cycles += cost.interval;
  if (Tracer* t = ctx_.tracer_for(sm_)) {
    const std::string name = fmt::format("mma.{}{}{}{} {}x{}x{} {}{}", in.ws ? "ws." : "", in.sp ? "sp." : "", in.pair ? "2cta." : "",
                                         in.a_from_tmem ? "ts" : "ss", in.f.m, in.f.n, in.logical_k(), name_of(in.f.a_type),
                                         in.block_scale ? fmt::format(" x{} {}", static_cast<int>(in.scale_vec),
                                                                      name_of(in.f.scale_type))
                                                        : std::string());
    const std::string args = fmt::format(R"("d_col":{},"accumulate":{},"warp":{},"issue":{},"done":{})",
                                         in.d.column(), in.accumulate, ws.index, at, done);
    t->span(sm_, kMmaTrack, name, start, cost.interval, args);
    t->async_span(sm_, "mma", "mma", next_id_, at, done, args);
  }
  ++next_id_;
  schedule_execute(cta, ws, in, start);
  return done;
}

Cycle MmaPipe::issue(Cta& cta, WarpState& ws, const TmemCopyInstr& in, Cycle at) {
  const std::uint32_t bytes = tmem_copy_rows(in.shape) * tmem_copy_columns(in.shape) * 4;
  const std::uint32_t bw = ctx_.config.mma.smem_bytes_per_cycle;
  const Cycle interval = (bytes + bw - 1) / bw;
  MmaPipe* peer = in.pair ? &cta.cluster().cta(cta.rank() + 1).sm().mma() : nullptr;
  const Cycle start = reserve(at, interval, peer);
  const Cycle done = start + interval + ctx_.config.tmem.access_latency;
  ++stats_.copies;
  stats_.copy_bytes += bytes * (in.pair ? 2 : 1);
  if (Tracer* t = ctx_.tracer_for(sm_))
    t->span(sm_, kMmaTrack, fmt::format("tcgen05.cp.{}", name_of(in.shape)), start, interval,
            fmt::format(R"("lane":{},"col":{},"smem":{},"warp":{},"issue":{},"done":{})", in.dst.lane(),
                        in.dst.column(), in.src.start_address, ws.index, at, done));
  schedule_execute(cta, ws, in, start);
  return done;
}

Cycle MmaPipe::issue(Cta& cta, WarpState& ws, const TmemShiftInstr& in, Cycle at) {
  const auto& c = ctx_.config.mma;
  MmaPipe* peer = in.pair ? &cta.cluster().cta(cta.rank() + 1).sm().mma() : nullptr;
  const Cycle start = reserve(at, c.shift_cycles, peer);
  const Cycle done = start + c.shift_latency;
  ++stats_.shifts;
  if (Tracer* t = ctx_.tracer_for(sm_))
    t->span(sm_, kMmaTrack, "tcgen05.shift.down", start, c.shift_cycles,
            fmt::format(R"("col":{},"warp":{},"issue":{},"done":{})", in.at.column(), ws.index, at, done));
  schedule_execute(cta, ws, in, start);
  return done;
}

namespace {

// Element (row, k) of an SMEM operand as a float (integers exactly).
float smem_element(Smem& smem, const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t,
                   std::uint32_t row, std::uint32_t k) {
  const OperandBits at = operand_bits(f, major, kind, t, row, k);
  const std::uint32_t bits = operand_element_bits(kind, t);
  if (bits >= 8) return load_as_float(t, smem.bytes(at.byte, bits / 8).data());
  // FP6 may straddle two bytes (a 16-element group is 12 bytes, so the next byte is in it).
  const auto lo = static_cast<std::uint32_t>(smem.bytes(at.byte, 1)[0]);
  const std::uint32_t word = at.bit + bits > 8 ? lo | static_cast<std::uint32_t>(smem.bytes(at.byte + 1, 1)[0]) << 8 : lo;
  const auto container = static_cast<std::byte>((word >> at.bit) & ((1u << bits) - 1));
  return load_as_float(t, &container);
}

// Elements [0, K) of row `row` of a K-major SMEM operand of whole-byte elements, as floats times
// `sign`: a 16-byte chunk of K holds 16 / size consecutive elements in every layout (the swizzles
// permute whole chunks), so each chunk is located once and converted in a run.
void smem_k_row(Smem& smem, const SmemDescriptorFields& f, DataType t, std::uint32_t row, std::uint32_t K, float sign,
                float* out) {
  const std::uint32_t size = size_of(t), per_chunk = 16 / size;
  for (std::uint32_t k = 0; k < K; k += per_chunk) {
    const std::uint32_t n = std::min(per_chunk, K - k);
    const std::byte* p = smem.bytes(operand_address(f, Major::K, size, row, k), n * size).data();
    for (std::uint32_t j = 0; j < n; ++j) out[k + j] = sign * load_as_float(t, p + j * size);
  }
}

// Whether an operand's rows can be read by smem_k_row.
bool whole_byte_k_major(MmaKind kind, DataType t, Major major) {
  return major == Major::K && operand_element_bits(kind, t) == 8 * size_of(t);
}

// Element (m, k) of A held in TMEM: row m in its accumulator lane, K packed into 32-bit columns
// from the low bytes up (kind::mxf4*: two FP4 per byte, the lower K in the low nibble).
float tmem_element(Tmem& tmem, const MmaInstr& in, std::uint32_t rows, std::uint32_t m, std::uint32_t k) {
  const std::uint32_t bits = operand_element_bits(in.kind, in.f.a_type);
  const std::uint32_t bit = k * bits;
  const std::uint32_t word = tmem.cell(in.a_tmem.lane() + accumulator_lane(m, rows), in.a_tmem.column() + bit / 32);
  if (bits >= 8) return load_as_float(in.f.a_type, reinterpret_cast<const std::byte*>(&word) + bit % 32 / 8);
  const auto container = static_cast<std::byte>(word >> bit % 32 & ((1u << bits) - 1));
  return load_as_float(in.f.a_type, &container);
}

// The block scale of element k of row m of A (`a`) or column m of B: the instruction's factors are
// bytes sf_id.. of the row's scale word, one per K / scale_vec elements.
float block_scale(Tmem& tmem, const MmaInstr& in, bool a, std::uint32_t m, std::uint32_t k) {
  const TmemAddr base = a ? in.scale_a : in.scale_b;
  const TmemCell c = a ? scale_a_cell(m) : scale_b_cell(m);
  const std::uint32_t word = tmem.cell(base.lane() + c.lane, base.column() + c.column);
  const std::uint32_t per = mma_k(in.kind) / static_cast<std::uint32_t>(in.scale_vec);
  const std::uint32_t byte = (a ? in.f.a_sf_id : in.f.b_sf_id) + k / per;
  const auto v = static_cast<std::byte>(word >> (8 * byte) & 0xFFu);
  return load_as_float(in.f.scale_type, &v);
}

// Row m of a sparse A over its logical K: each chunk's stored elements at the positions its
// metadata code names, zeros elsewhere. An undefined code is a located error, except 0b0000 over
// stored zeros (CUTLASS's compressor writes it for an all-zero chunk).
template <class Stored>
void expand_sparse_row(const MmaInstr& in, Tmem& tmem, WarpState& ws, Cta& cta, std::uint32_t m, Stored stored,
                       float* row) {
  const SparseChunk chunk = sparse_chunk(in.kind);
  const std::uint32_t chunks = in.logical_k() / chunk.elements;
  const std::uint32_t column = in.meta.column() + in.f.sparse_selector;
  for (std::uint32_t g = 0; g < chunks; ++g) {
    const MetadataNibble at = sparse_metadata_nibble(in.kind, m, g);
    const std::uint32_t code = tmem.cell(in.meta.lane() + at.cell.lane, column + at.cell.column) >> at.bit & 0xFu;
    float* out = row + g * chunk.elements;
    std::fill(out, out + chunk.elements, 0.0f);
    std::uint32_t pos[4];
    const bool defined = sparse_positions(in.kind, code, pos);
    for (std::uint32_t j = 0; j < chunk.stored; ++j) {
      const float v = stored(m, g * chunk.stored + j);
      if (defined) out[pos[j]] = v;
      else if (code != 0 || v != 0.0f)
        cta.fail(Rule::MmaInvalid, ws, "tcgen05.mma.sp",
                 fmt::format("sparsity metadata code {:#06b} of row {}, chunk {} (TMEM lane {}, column {}, bit {}) is "
                             "undefined for kind::{}",
                             code, m, g, in.meta.lane() + at.cell.lane, column + at.cell.column, at.bit,
                             name_of(in.kind)),
                 in.kind == MmaKind::TF32 ? "tf32 codes are 0b0100 (element 0) and 0b1110 (element 1)"
                                          : "two different 2-bit indices, the first in bits 1-0");
    }
  }
}

}  // namespace

// Calls fn(c, a, b, M, N, K) for each CTA c of the instruction with its A (M x K, negated and
// block-scaled) and all of B (N x K) as floats, the values the products are formed from. A
// cta_group::2 MMA computes each CTA's M/2 rows from its own A and TMEM, with B rows 0..N/2-1 from
// the leader's SMEM and N/2..N-1 from the peer's; each CTA's B scale factors are its own copy.
template <class Fn>
void for_each_cta_operands(const MmaInstr& in, Cta& cta, WarpState& ws, Fn fn) {
  const std::uint32_t ctas = in.pair ? 2 : 1;
  const std::uint32_t M = in.f.m / ctas, N = in.f.n, K = in.logical_k();
  const float sa = in.f.negate_a ? -1.0f : 1.0f, sb = in.f.negate_b ? -1.0f : 1.0f;
  thread_local std::vector<float> a, b;
  a.resize(static_cast<std::size_t>(M) * K);
  b.resize(static_cast<std::size_t>(N) * K);
  const std::uint32_t b_rows = N / ctas;
  for (std::uint32_t c = 0; c < ctas; ++c) {
    Cta& dc = cta.cluster().cta(cta.rank() + c);
    Tmem& tmem = dc.sm().tmem();
    if (c == 0 || in.block_scale)  // B is the same for both CTAs unless each scales it itself
      for (std::uint32_t n = 0; n < N; ++n) {
        Smem& smem = cta.cluster().cta(cta.rank() + n / b_rows).smem();
        if (!in.block_scale && whole_byte_k_major(in.kind, in.f.b_type, in.f.b_major)) {
          smem_k_row(smem, in.b, in.f.b_type, n % b_rows, K, sb, &b[n * K]);
          continue;
        }
        for (std::uint32_t k = 0; k < K; ++k)
          b[n * K + k] = sb * smem_element(smem, in.b, in.f.b_major, in.kind, in.f.b_type, n % b_rows, k) *
                         (in.block_scale ? block_scale(tmem, in, false, n, k) : 1.0f);
      }
    auto stored = [&](std::uint32_t m, std::uint32_t k) {  // element k of row m as A holds it
      return sa * (in.a_from_tmem ? tmem_element(tmem, in, M, m, k)
                                  : smem_element(dc.smem(), in.a, in.f.a_major, in.kind, in.f.a_type, m, k));
    };
    const bool a_rows = !in.a_from_tmem && !in.sp && !in.block_scale && whole_byte_k_major(in.kind, in.f.a_type, in.f.a_major);
    for (std::uint32_t m = 0; m < M; ++m) {
      if (in.sp) {
        expand_sparse_row(in, tmem, ws, dc, m, stored, &a[m * K]);
        continue;
      }
      if (a_rows) {
        smem_k_row(dc.smem(), in.a, in.f.a_type, m, K, sa, &a[m * K]);
        continue;
      }
      for (std::uint32_t k = 0; k < K; ++k)
        a[m * K + k] = stored(m, k) * (in.block_scale ? block_scale(tmem, in, true, m, k) : 1.0f);
    }
    fn(dc, a.data(), b.data(), M, N, K);
  }
}

// D[m][n] (+)= sum_k A[m][k] * B[n][k]: products of the narrow inputs (and of their power-of-two or
// 4-bit-mantissa block scales) are exact in fp32; the K products of one instruction are summed in
// fp32 in k order, then added to D.
void MmaPipe::execute(const MmaInstr& in, Cta& cta, WarpState& ws) {
  if (in.kind == MmaKind::I8) {
    execute_integer(in, cta, ws);
    return;
  }
  for_each_cta_operands(in, cta, ws, [&](Cta& dc, const float* a, const float* b, std::uint32_t M, std::uint32_t N,
                                     std::uint32_t K) {
    Tmem& tmem = dc.sm().tmem();
    thread_local std::vector<float> bt, sums;
    bt.resize(static_cast<std::size_t>(K) * N);
    sums.resize(static_cast<std::size_t>(M) * N);
    for (std::uint32_t n = 0; n < N; ++n)
      for (std::uint32_t k = 0; k < K; ++k) bt[static_cast<std::size_t>(k) * N + n] = b[n * K + k];
    product_sums(a, M, bt.data(), N, K, sums.data());
    const std::uint32_t run = accumulator_run(in);
    for (std::uint32_t m = 0; m < M; ++m) {
      const float* row = &sums[static_cast<std::size_t>(m) * N];
      for (std::uint32_t n0 = 0; n0 < N; n0 += run) {
        const TmemCell at = accumulator_cell(in, m, n0);
        std::uint32_t* cells = &tmem.cell(in.d.lane() + at.lane, in.d.column() + at.column);
        const float* sum = row + n0;
        if (in.accumulate)
          for (std::size_t j = 0; j < run; ++j) cells[j] = std::bit_cast<std::uint32_t>(std::bit_cast<float>(cells[j]) + sum[j]);
        else
          std::memcpy(cells, sum, run * sizeof(float));  // 0 + s is s except for s = -0, which the sum never is
      }
    }
  });
}

// kind::i8: exact integer products summed into the s32 accumulator, wrapping modulo 2^32 or, with
// the saturate bit, clamped to the s32 range (PTX .satfinite for integers).
void MmaPipe::execute_integer(const MmaInstr& in, Cta& cta, WarpState& ws) {
  for_each_cta_operands(in, cta, ws, [&](Cta& dc, const float* a, const float* b, std::uint32_t M, std::uint32_t N,
                                     std::uint32_t K) {
    Tmem& tmem = dc.sm().tmem();
    for (std::uint32_t m = 0; m < M; ++m)
      for (std::uint32_t n = 0; n < N; ++n) {
        std::int64_t sum = 0;
        for (std::uint32_t k = 0; k < K; ++k)
          sum += static_cast<std::int64_t>(a[m * K + k]) * static_cast<std::int64_t>(b[n * K + k]);
        const TmemCell at = accumulator_cell(in, m, n);
        std::uint32_t& cell = tmem.cell(in.d.lane() + at.lane, in.d.column() + at.column);
        const std::int64_t total = (in.accumulate ? static_cast<std::int64_t>(static_cast<std::int32_t>(cell)) : 0) + sum;
        const std::int64_t kept =
            in.f.saturate ? std::clamp<std::int64_t>(total, INT32_MIN, INT32_MAX) : static_cast<std::int32_t>(total);
        cell = static_cast<std::uint32_t>(static_cast<std::int32_t>(kept));
      }
  });
}

// Row r's 32-bit words, read from the K-major canonical layout, land in the row's lanes.
// With cta_group::2 the same happens in each CTA of the pair, from its SMEM into its TMEM.
void MmaPipe::execute(const TmemCopyInstr& in, Cta& cta, WarpState&) {
  const std::uint32_t words = tmem_copy_columns(in.shape);
  for (std::uint32_t c = 0; c < (in.pair ? 2u : 1u); ++c) {
    Cta& dc = cta.cluster().cta(cta.rank() + c);
    Smem& smem = dc.smem();
    Tmem& tmem = dc.sm().tmem();
    for (std::uint32_t r = 0; r < tmem_copy_rows(in.shape); ++r) {
      const TmemCopyLanes lanes = tmem_copy_lanes(in.shape, r);
      for (std::uint32_t j = 0; j < words; ++j) {
        std::uint32_t v;
        std::memcpy(&v, smem.bytes(operand_address(in.src, Major::K, 4, r, j), 4).data(), 4);
        for (std::uint32_t i = 0; i < lanes.count; ++i) tmem.cell(in.dst.lane() + lanes.lane[i], in.dst.column() + j) = v;
      }
    }
  }
}

void MmaPipe::execute(const TmemShiftInstr& in, Cta& cta, WarpState&) {
  for (std::uint32_t c = 0; c < (in.pair ? 2u : 1u); ++c) {
    Tmem& tmem = cta.cluster().cta(cta.rank() + c).sm().tmem();
    for (std::uint32_t lane = 0; lane < kTmemLanes; ++lane) {
      if (lane % 32 == 31) continue;  // each sub-partition's last row keeps its value
      for (std::uint32_t j = 0; j < kShiftColumns; ++j)
        tmem.cell(lane, in.at.column() + j) = tmem.cell(lane + 1, in.at.column() + j);
    }
  }
}

}  // namespace bwsim
