// The tcgen05 operations of the Warp handle: TMEM allocation, MMA issue and commit, TMEM loads,
// stores and copies. Operands are decoded and validated at issue, so a misuse is reported at the
// instruction that made it.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "bwsim/check/MmaRaceChecks.hpp"
#include "bwsim/check/TmemLoadRaceCheck.hpp"
#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Sm.hpp"
#include "bwsim/kernel/Warp.hpp"

#include "bwsim/hw/tensor/sm100/SparseMetadata.hpp"

namespace bwsim {

void Warp::require_tcgen05(const char* op) const {
  if (config().tmem.columns == 0)
    throw InputError(fmt::format("{}: the {} config has no tensor memory and no tcgen05 (tmem.columns = 0); "
                                 "run this kernel on a Blackwell config such as sim_configs/b200.yaml",
                                 op, config().name));
}

Warp::AllocAwaiter Warp::tcgen05_alloc(SmemAddr dst, std::uint32_t ncols, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.alloc.cta_group::2" : "tcgen05.alloc";
  require_tcgen05(op);
  check_cta_group(cta_group, op, false);
  cta_.tmem_check_alloc_size(ws_, op, ncols);
  cta_.check_smem(ws_, op, dst.offset, 4, 4);
  cta_.check_no_live_barrier(ws_, op, dst.offset, 4);
  ws_.wait = WaitKind::TmemAlloc;
  ws_.wait_slot = dst.offset;
  ws_.wait_value = ncols;
  ws_.pair_alloc = cta_group == 2;
  return AllocAwaiter{*this};
}

TmemAddr Warp::AllocAwaiter::await_resume() {
  // The allocation itself takes tmem.alloc_cycles; the warp is stalled in it meanwhile.
  w.ws_.ready += w.config().tmem.alloc_cycles;
  w.ws_.account(Activity::TmemAlloc, w.config().tmem.alloc_cycles);
  w.ws_.pair_alloc = false;
  return TmemAddr{static_cast<std::uint32_t>(w.ws_.token_result)};
}

// With cta_group 2 each CTA's warp frees its own SM's copy of the pair's columns.
void Warp::tcgen05_dealloc(TmemAddr addr, std::uint32_t ncols, std::uint32_t cta_group) {
  const char* op = "tcgen05.dealloc";
  check_cta_group(cta_group, op, false);
  cta_.tmem_check_alloc_size(ws_, op, ncols);
  if (addr.lane() != 0)
    cta_.fail(Rule::TmemAllocMisuse, ws_, op, fmt::format("address {:#x} has lane {}, not 0", addr.raw, addr.lane()),
              "pass the address tcgen05.alloc returned");
  cta_.race_check([&cta = cta_, &ws = ws_, b = addr.column(), e = addr.column() + ncols] { races::dealloc(cta, ws, b, e); });
  const Cycle t = issue(config().warp.issue_cycles);
  cta_.tmem_dealloc_at(ws_, t + config().tmem.alloc_cycles, addr.column(), ncols);
  if (cta_.tracer()) trace_op(fmt::format("tcgen05.dealloc {} columns at {}", ncols, addr.column()), t, 1);
}

void Warp::tcgen05_relinquish_alloc_permit() {
  issue(config().warp.issue_cycles);
  cta_.tmem_relinquish(ws_);
}

void Warp::check_cta_group(std::uint32_t cta_group, const char* op, bool leader) {
  if (cta_group != 1 && cta_group != 2)
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("cta_group::{} does not exist", cta_group), "use 1 or 2");
  if (cta_group == 2) check_pair(op, leader);
}

SmemDescriptorFields Warp::decode_operand(SmemOperandMemo& memo, SmemDescriptor d, const char* which,
                                          const char* op) {
  SmemDescriptorFields f;
  if (memo.decoded(d, f)) return f;
  if (auto err = decode(d, f)) cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("{}: {}", which, *err), "");
  if (f.base_offset != 0)
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("{}: base offset {} is not modeled", which, f.base_offset),
              "place swizzled operands at swizzle-atom-aligned SMEM addresses and leave the base offset 0");
  memo.keep(d, f);
  return f;
}

void Warp::operand_outside_smem(SmemSpan span, const char* which, const char* op) {
  cta_.fail(Rule::SmemOutOfBounds, ws_, op,
            fmt::format("{} [{:#x}, {:#x}) lies outside the CTA's {} bytes of SMEM", which, span.begin, span.end,
                        cta_.smem().size()),
            "check the descriptor's start address, LBO and SBO");
}

// PTX (tcgen05.mma shapes, dense): cta_group::1 M 64 or 128 with N a multiple of 8 in 8..256
// (the condensed reference's "multiple of 16 for M = 128" is stricter than the ISA); cta_group::2
// M 128 or 256 with N a multiple of 16 in 32..256. kind::i8 narrows N (cta_group::1: 8, 16, 24,
// 32, then multiples of 16 to 256; cta_group::2: multiples of 32). (The block-scaled kinds have
// no M = 64: their descriptor holds M >> 7.)
void Warp::check_mma_kind(const MmaInstr& in, const char* op) {
  if (in.ws) {
    check_ws(in, op);
    return;
  }
  const std::uint32_t M = in.f.m, N = in.f.n;
  const bool ok = in.pair ? (M == 128 || M == 256) && N % 16 == 0 && N >= 32 && N <= 256
                          : (M == 64 || M == 128) && N % 8 == 0 && N >= 8 && N <= 256;
  if (!ok)
    cta_.fail(Rule::MmaInvalid, ws_, op,
              fmt::format("shape M={} N={} is not a cta_group::{} shape", M, N, in.pair ? 2 : 1),
              in.pair ? "M = 128 or 256 with N a multiple of 16 in 32..256"
                      : "M = 64 or 128 with N a multiple of 8 in 8..256");
  if (in.kind == MmaKind::I8 && (in.pair ? N % 32 != 0 : N > 32 && N % 16 != 0))
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("N={} is not a kind::i8 cta_group::{} N", N, in.pair ? 2 : 1),
              in.pair ? "N a multiple of 32" : "N = 8, 16, 24, 32 or a multiple of 16 up to 256");
  if (in.pair && in.a_from_tmem && M == 128)
    cta_.fail(Rule::MmaInvalid, ws_, op, "cta_group::2 M = 128 with A in TMEM is not modeled", "use M = 256 or SS");
  if (in.a_from_tmem && operand_element_bits(in.kind, in.f.a_type) < 8 && in.kind == MmaKind::F8F6F4)
    cta_.fail(Rule::MmaInvalid, ws_, op,
              fmt::format("A in TMEM as {} of kind::f8f6f4 (one element per byte container) is not modeled",
                          name_of(in.f.a_type)),
              "keep FP6/FP4 A in SMEM");
  if (is_block_scaled(in.kind) != in.block_scale)
    cta_.fail(Rule::MmaInvalid, ws_, op,
              in.block_scale ? fmt::format("kind::{} takes no scale factors", name_of(in.kind))
                             : fmt::format("kind::{} needs .block_scale and its scale-factor operands", name_of(in.kind)),
              "the block-scaled kinds are mxf8f6f4, mxf4 and mxf4nvf4");
  if (in.block_scale) check_block_scale(in, op);
  if (in.sp != in.f.sparse)
    cta_.fail(Rule::MmaInvalid, ws_, op,
              in.sp ? "the instruction descriptor's sparse bit (2) is clear on tcgen05.mma.sp"
                    : "the instruction descriptor's sparse bit (2) is set on a dense tcgen05.mma",
              "set bit 2 exactly for tcgen05.mma.sp");
  if (in.sp) check_sparse(in, op);
}

// PTX (tcgen05.mma.ws): cta_group::1, M = 32 / 64 / 128, N = 64 / 128 / 256, the unscaled kinds;
// the collector rules (use / lastuse need a valid fill of buffer N). The collector state changes in
// issue order, as the tensor core sees the instructions.
void Warp::check_ws(const MmaInstr& in, const char* op) {
  const std::uint32_t M = in.f.m, N = in.f.n;
  if ((M != 32 && M != 64 && M != 128) || (N != 64 && N != 128 && N != 256))
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("shape M={} N={} is not a .ws shape", M, N),
              "M = 32, 64 or 128 with N = 64, 128 or 256");
  if (is_block_scaled(in.kind) || in.block_scale)
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("kind::{} has no .ws form", name_of(in.kind)),
              "the .ws kinds are f16, tf32, f8f6f4 and i8");
  if (in.f.sparse) cta_.fail(Rule::MmaInvalid, ws_, op, "tcgen05.mma.ws.sp is not modeled", "");
  if (in.a_from_tmem && M != 128)
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format(".ws with A in TMEM at M = {} is not modeled", M),
              "use M = 128 or A in SMEM");
  if (in.collector.buffer > 3)
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("collector buffer b{} does not exist", in.collector.buffer),
              "b0..b3");
  MmaPipe::CollectorBuffer& c = cta_.sm().mma().collector(in.collector.buffer);
  if (in.b_from_collector()) {
    if (!c.valid || c.owner != &cta_)
      cta_.fail(Rule::MmaInvalid, ws_, op,
                fmt::format(".collector::b{}::{} without a valid fill of that buffer", in.collector.buffer,
                            name_of(in.collector.op)),
                "fill the buffer (.collector::bN::fill) with this B first; lastuse and discard end it");
    if (c.b.start_address != in.b.start_address || c.b.leading_byte_offset != in.b.leading_byte_offset ||
        c.b.stride_byte_offset != in.b.stride_byte_offset || c.b.layout != in.b.layout || c.type != in.f.b_type)
      cta_.fail(Rule::MmaInvalid, ws_, op,
                fmt::format(".collector::b{}::{} names B at SMEM {:#x}, but the buffer holds the B filled from {:#x}",
                            in.collector.buffer, name_of(in.collector.op), in.b.start_address, c.b.start_address),
                "use a collector buffer only with the B it was filled with");
  }
  switch (in.collector.op) {
    case CollectorOp::Fill: c = {true, &cta_, in.b, in.f.b_type}; break;
    case CollectorOp::Use: break;
    case CollectorOp::LastUse:
    case CollectorOp::Discard: c.valid = false; break;
  }
}

// PTX (tcgen05.mma.sp): the metadata lies in TMEM from lane 0 over the instruction's columns.
// M = 64 and cta_group::2 M = 128 use half the datapath (Layouts F and C), whose metadata layout
// PTX gives only in figures bwsim has not read: not modeled.
void Warp::check_sparse(const MmaInstr& in, const char* op) {
  if (in.f.m != (in.pair ? 256u : 128u))
    cta_.fail(Rule::MmaInvalid, ws_, op,
              fmt::format("sparse M = {} on cta_group::{} (half the datapath) is not modeled", in.f.m, in.pair ? 2 : 1),
              in.pair ? "use M = 256" : "use M = 128");
  if (in.meta.lane() != 0)
    cta_.fail(Rule::MmaInvalid, ws_, op,
              fmt::format("metadata address {:#x} has lane {}, not 0", in.meta.raw, in.meta.lane()),
              "the metadata of 128 rows fills all 128 lanes");
  // B spans 64 bytes of K, wider than a 32-byte swizzle row: where its second half lies is not modeled.
  if (in.f.b_major == Major::K && in.b.layout == UmmaLayout::Swizzle32B)
    cta_.fail(Rule::MmaInvalid, ws_, op, "sparse B (64 bytes of K per row) in the 32-byte swizzle layout is not modeled",
              "lay B out with the 64- or 128-byte swizzle, or none");
  for (std::uint32_t c = 0; c < (in.pair ? 2u : 1u); ++c)
    cta_.cluster().cta(cta_.rank() + c).tmem_check_access(ws_, op, 0, kTmemLanes, in.meta.column() + in.f.sparse_selector,
                                                          sparse_metadata_columns(in.kind), false);
}

// PTX (tcgen05.mma .block_scale): the scale type and .scale_vec each kind takes, the scale-factor
// IDs each .scale_vec allows (1X: byte 0-3; 2X: 0 or 2; 4X: 0), and the factors' TMEM columns.
void Warp::check_block_scale(const MmaInstr& in, const char* op) {
  const ScaleVec v = in.scale_vec;
  const bool ue8m0 = in.f.scale_type == DataType::UE8M0;
  bool ok = false;
  switch (in.kind) {
    case MmaKind::MXF8F6F4: ok = ue8m0 && v == ScaleVec::X1; break;
    case MmaKind::MXF4: ok = ue8m0 && v == ScaleVec::X2; break;
    case MmaKind::MXF4NVF4: ok = ue8m0 ? v != ScaleVec::X1 : v == ScaleVec::X4; break;
    default: break;
  }
  if (!ok)
    cta_.fail(Rule::MmaInvalid, ws_, op,
              fmt::format("kind::{} takes no .scale_vec::{}X with {} scale factors", name_of(in.kind),
                          static_cast<int>(v), name_of(in.f.scale_type)),
              "mxf8f6f4: ue8m0 1X; mxf4: ue8m0 2X; mxf4nvf4: ue8m0 2X or 4X, ue4m3 4X");
  const std::uint32_t step = static_cast<std::uint32_t>(v);  // bytes of one row's factors: IDs are multiples
  for (const auto& [id, which] : {std::pair{in.f.a_sf_id, "A"}, std::pair{in.f.b_sf_id, "B"}})
    if (id % step != 0)
      cta_.fail(Rule::MmaInvalid, ws_, op,
                fmt::format("scale-factor {} ID {} is not a valid byte for .scale_vec::{}X", which, id,
                            static_cast<int>(v)),
                step == 4 ? "the ID must be 0 with 4X" : "the ID must be 0 or 2 with 2X");
  const std::uint32_t rows = in.pair ? in.f.m / 2 : in.f.m;
  for (std::uint32_t c = 0; c < (in.pair ? 2u : 1u); ++c) {
    Cta& cta = cta_.cluster().cta(cta_.rank() + c);
    for (const auto& [addr, which, cols] : {std::tuple{in.scale_a, "scale A", scale_a_cell(rows - 1).column + 1},
                                            std::tuple{in.scale_b, "scale B", scale_b_cell(in.f.n - 1).column + 1}}) {
      if (addr.lane() != 0)
        cta_.fail(Rule::MmaInvalid, ws_, op,
                  fmt::format("{} address {:#x} has lane {}, not 0", which, addr.raw, addr.lane()),
                  "the factors fill all 128 lanes (copies in each lane quadrant)");
      cta.tmem_check_access(ws_, op, 0, kTmemLanes, addr.column(), cols, false);
    }
  }
}

MmaInstr Warp::issue_mma(MmaInstr in, InstrDescriptor idesc, const char* op) {
  require_tcgen05(op);
  WarpState::DecodedMma& memo = ws_.last_mma_decoded;
  if (memo.valid && memo.kind == in.kind && memo.raw == idesc.raw) {
    in.f = memo.fields;
  } else {
    if (auto err = decode(in.kind, idesc, in.f)) cta_.fail(Rule::MmaInvalid, ws_, op, *err, "");
    memo = {in.kind, idesc.raw, true, in.f};
  }
  check_mma_kind(in, op);
  if (in.d.lane() != 0)
    cta_.fail(Rule::MmaInvalid, ws_, op, fmt::format("D address {:#x} has lane {}, not 0", in.d.raw, in.d.lane()), "");
  for (std::uint32_t c = 0; c < (in.pair ? 2u : 1u); ++c) {
    Cta& cta = cta_.cluster().cta(cta_.rank() + c);
    if (c) cta.check_resident_for(ws_, op);
    cta.tmem_check_access(ws_, op, 0, kTmemLanes, in.d.column(), in.d_columns(), false);
    if (in.a_from_tmem)
      cta.tmem_check_access(ws_, op, in.a_tmem.lane(), in.a_tmem_lanes(), in.a_tmem.column(), in.a_columns(), false);
  }
  MmaPipe& pipe = cta_.sm().mma();
  SmemSpan a_span{};
  if (in.a_from_tmem) {
    if (in.f.a_major != Major::K)
      cta_.fail(Rule::MmaInvalid, ws_, op, "A from TMEM must be K-major (transpose-A bit 0)", "");
  } else {
    a_span = pipe.operand_memo(0).span(in.a, in.f.a_major, in.kind, in.f.a_type, in.a_rows());
    check_operand_in_smem(a_span, "A operand", op);
  }
  const std::uint32_t b_k_times = in.sp ? 2 : 1;  // B spans the logical K
  const SmemSpan b_span = pipe.operand_memo(1).span(in.b, in.f.b_major, in.kind, in.f.b_type, in.b_rows(), b_k_times);
  check_operand_in_smem(b_span, "B operand", op);
  issue_checked_mma(in, pipe.cost(in), a_span, b_span);
  return in;
}

void Warp::issue_checked_mma(const MmaInstr& in, const MmaCost& cost, SmemSpan a_span, SmemSpan b_span) {
  if (cta_.checks_races()) {
    using Reads = MmaRaceChecks::Reads;
    const Reads a = in.a_from_tmem ? Reads::of(in.a_tmem.column(), in.a_tmem.column() + in.a_columns())
                                   : Reads::of(a_span.begin, a_span.end);
    cta_.race_check_absorbing(MmaRaceChecks{&cta_, &ws_, a, Reads::of(b_span.begin, b_span.end), in.d.column(),
                                            in.d.column() + in.d_columns(), in.a_from_tmem, in.pair});
  }
  const Cycle t = issue(config().mma.issue_cycles);
  const Cycle done = cta_.sm().mma().issue(cta_, ws_, in, cost, t);
  ws_.tcgen05_done = std::max(ws_.tcgen05_done, done);
}

bool Warp::issue_repeated_mma(bool a_in_tmem, MmaKind kind, TmemAddr d, std::uint64_t a, SmemDescriptor b,
                              InstrDescriptor idesc, bool enable_input_d, std::uint32_t cta_group, const char* op) {
  MmaRepeat::Entry& e = ws_.mma_repeat.of_form[a_in_tmem ? 1 : 0];
  const TmemAddr a_tmem{static_cast<std::uint32_t>(a)};
  if (!e.valid || e.kind != kind || e.idesc != idesc.raw || e.d != d.raw ||
      e.cta_group != cta_group || e.b_rest != without_start_address(b) ||
      (a_in_tmem ? e.a_lane != a_tmem.lane() : e.a_rest != without_start_address(SmemDescriptor{a})) ||
      e.epoch != cta_.sm().tmem().epoch())
    return false;
  MmaInstr& in = e.in;
  if (in.pair) {
    const Cta& peer = cta_.cluster().cta(cta_.rank() + 1);
    if (peer.finished() || e.peer_epoch != peer.sm().tmem().epoch()) return false;
  }
  in.accumulate = enable_input_d;
  SmemSpan a_span{};
  if (a_in_tmem) {
    in.a_tmem = a_tmem;
    for (std::uint32_t c = 0; c < (in.pair ? 2u : 1u); ++c)
      cta_.cluster().cta(cta_.rank() + c).tmem_check_access(ws_, op, a_tmem.lane(), in.a_tmem_lanes(), a_tmem.column(),
                                                            in.a_columns(), false);
  } else {
    in.a.start_address = start_address_of(SmemDescriptor{a});
    a_span = span_at(in.a.start_address, e.a_offsets);
    check_operand_in_smem(a_span, "A operand", op);
  }
  in.b.start_address = start_address_of(b);
  const SmemSpan b_span = span_at(in.b.start_address, e.b_offsets);
  check_operand_in_smem(b_span, "B operand", op);
  issue_checked_mma(in, e.cost, a_span, b_span);
  return true;
}

void Warp::keep_repeated_mma(bool a_in_tmem, const MmaInstr& in, std::uint64_t a, SmemDescriptor b,
                             InstrDescriptor idesc, std::uint32_t cta_group) {
  MmaPipe& pipe = cta_.sm().mma();
  ws_.mma_repeat.of_form[a_in_tmem ? 1 : 0] = MmaRepeat::Entry{
      .valid = true,
      .kind = in.kind,
      .idesc = idesc.raw,
      .d = in.d.raw,
      .cta_group = cta_group,
      .a_rest = a_in_tmem ? 0 : without_start_address(SmemDescriptor{a}),
      .b_rest = without_start_address(b),
      .a_lane = a_in_tmem ? in.a_tmem.lane() : 0,
      .epoch = cta_.sm().tmem().epoch(),
      .peer_epoch = in.pair ? cta_.cluster().cta(cta_.rank() + 1).sm().tmem().epoch() : 0,
      .in = in,
      .cost = pipe.cost(in),
      .a_offsets = a_in_tmem ? SpanOffsets{} : pipe.operand_memo(0).offsets(),
      .b_offsets = pipe.operand_memo(1).offsets()};
}

// The SS and TS forms' instructions before their descriptor is decoded (issue_mma).
MmaInstr Warp::mma_ss(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, bool enable_input_d,
                      std::uint32_t cta_group, const char* op) {
  check_cta_group(cta_group, op, true);
  return MmaInstr{.kind = kind,
                  .a = decode_operand(cta_.sm().mma().operand_memo(0), a, "A descriptor", op),
                  .b = decode_operand(cta_.sm().mma().operand_memo(1), b, "B descriptor", op),
                  .d = d,
                  .accumulate = enable_input_d,
                  .pair = cta_group == 2};
}

MmaInstr Warp::mma_ts(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, bool enable_input_d,
                      std::uint32_t cta_group, const char* op) {
  check_cta_group(cta_group, op, true);
  return MmaInstr{.kind = kind,
                  .b = decode_operand(cta_.sm().mma().operand_memo(1), b, "B descriptor", op),
                  .a_from_tmem = true,
                  .a_tmem = a,
                  .d = d,
                  .accumulate = enable_input_d,
                  .pair = cta_group == 2};
}

namespace {
MmaInstr with_collector(MmaInstr in, Collector c) {
  in.ws = true;
  in.collector = c;
  return in;
}

MmaInstr with_metadata(MmaInstr in, TmemAddr meta) {
  in.sp = true;
  in.meta = meta;
  return in;
}

MmaInstr with_scales(MmaInstr in, const Warp::BlockScale& scale) {
  in.block_scale = true;
  in.scale_a = scale.a;
  in.scale_b = scale.b;
  in.scale_vec = scale.vec;
  return in;
}
}  // namespace

void Warp::tcgen05_mma_ws(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, InstrDescriptor idesc,
                          bool enable_input_d, Collector collector) {
  const char* op = "tcgen05.mma.ws";
  issue_mma(with_collector(mma_ss(kind, d, a, b, enable_input_d, 1, op), collector), idesc, op);
}

void Warp::tcgen05_mma_ws(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, InstrDescriptor idesc,
                          bool enable_input_d, Collector collector) {
  const char* op = "tcgen05.mma.ws";
  issue_mma(with_collector(mma_ts(kind, d, a, b, enable_input_d, 1, op), collector), idesc, op);
}

void Warp::tcgen05_mma_sp(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, TmemAddr meta,
                          InstrDescriptor idesc, bool enable_input_d, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.mma.sp.cta_group::2" : "tcgen05.mma.sp";
  issue_mma(with_metadata(mma_ss(kind, d, a, b, enable_input_d, cta_group, op), meta), idesc, op);
}

void Warp::tcgen05_mma_sp(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, TmemAddr meta, InstrDescriptor idesc,
                          bool enable_input_d, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.mma.sp.cta_group::2" : "tcgen05.mma.sp";
  issue_mma(with_metadata(mma_ts(kind, d, a, b, enable_input_d, cta_group, op), meta), idesc, op);
}

void Warp::tcgen05_mma(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, InstrDescriptor idesc,
                       bool enable_input_d, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.mma.cta_group::2" : "tcgen05.mma";
  if (issue_repeated_mma(false, kind, d, a.raw, b, idesc, enable_input_d, cta_group, op)) return;
  keep_repeated_mma(false, issue_mma(mma_ss(kind, d, a, b, enable_input_d, cta_group, op), idesc, op), a.raw, b, idesc,
                    cta_group);
}

void Warp::tcgen05_mma(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, InstrDescriptor idesc,
                       bool enable_input_d, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.mma.cta_group::2 (A in TMEM)" : "tcgen05.mma (A in TMEM)";
  if (issue_repeated_mma(true, kind, d, a.raw, b, idesc, enable_input_d, cta_group, op)) return;
  keep_repeated_mma(true, issue_mma(mma_ts(kind, d, a, b, enable_input_d, cta_group, op), idesc, op), a.raw, b, idesc,
                    cta_group);
}

void Warp::tcgen05_mma(MmaKind kind, TmemAddr d, SmemDescriptor a, SmemDescriptor b, InstrDescriptor idesc,
                       const BlockScale& scale, bool enable_input_d, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.mma.cta_group::2.block_scale" : "tcgen05.mma.block_scale";
  issue_mma(with_scales(mma_ss(kind, d, a, b, enable_input_d, cta_group, op), scale), idesc, op);
}

void Warp::tcgen05_mma(MmaKind kind, TmemAddr d, TmemAddr a, SmemDescriptor b, InstrDescriptor idesc,
                       const BlockScale& scale, bool enable_input_d, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.mma.cta_group::2.block_scale (A in TMEM)"
                                  : "tcgen05.mma.block_scale (A in TMEM)";
  issue_mma(with_scales(mma_ts(kind, d, a, b, enable_input_d, cta_group, op), scale), idesc, op);
}

void Warp::tcgen05_cp(TmemAddr dst, SmemDescriptor src, TmemCopyShape shape, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.cp.cta_group::2" : "tcgen05.cp";
  require_tcgen05(op);
  check_cta_group(cta_group, op, true);
  TmemCopyInstr in{.shape = shape,
                   .src = decode_operand(cta_.sm().mma().operand_memo(2), src, "source descriptor", op),
                   .dst = dst,
                   .pair = cta_group == 2};
  const std::uint32_t rows = tmem_copy_rows(shape), words = tmem_copy_columns(shape);
  const SmemSpan src_span = operand_span(in.src, Major::K, 4, rows, words);
  for (std::uint32_t c = 0; c < cta_group; ++c) {
    Cta& cta = cta_.cluster().cta(cta_.rank() + c);
    if (c) cta.check_resident_for(ws_, op);
    cta.tmem_check_access(ws_, op, dst.lane(), tmem_copy_lane_span(shape), dst.column(), words, false);
    cta_.race_check([&cta, &ws = ws_, src_span] {
      races::mma_operand(cta, ws, src_span.begin, src_span.end, "its source", src_span.end);
    });
  }
  check_operand_in_smem(src_span, "source", op);
  const Cycle t = issue(config().mma.issue_cycles);
  const Cycle done = cta_.sm().mma().issue(cta_, ws_, in, t);
  ws_.tcgen05_done = std::max(ws_.tcgen05_done, done);
}

void Warp::tcgen05_shift(TmemAddr at, std::uint32_t cta_group) {
  const char* op = cta_group == 2 ? "tcgen05.shift.cta_group::2.down" : "tcgen05.shift.down";
  require_tcgen05(op);
  check_cta_group(cta_group, op, true);
  // PTX requires the lane aligned to 32; what a shift from lane 32, 64 or 96 moves is not
  // documented or measured (one issue from lane 0 shifts all four sub-partitions).
  if (at.lane() != 0)
    cta_.fail(Rule::MmaInvalid, ws_, op,
              fmt::format("address {:#x} has lane {}: {}", at.raw, at.lane(),
                          at.lane() % 32 ? "PTX requires a lane aligned to 32" : "a shift from a lane other than 0 is not modeled"),
              "shift from lane 0: it moves the rows of all four sub-partitions");
  for (std::uint32_t c = 0; c < cta_group; ++c) {
    Cta& cta = cta_.cluster().cta(cta_.rank() + c);
    if (c) cta.check_resident_for(ws_, op);
    cta.tmem_check_access(ws_, op, 0, kTmemLanes, at.column(), kShiftColumns, false);
    // It rewrites the columns as an MMA writes D: readers must be ordered before, and after it through a commit.
    cta_.race_check([&cta, &ws = ws_, b = at.column()] { races::mma_accumulator(cta, ws, b, b + kShiftColumns); });
  }
  const Cycle t = issue(config().mma.issue_cycles);
  const Cycle done = cta_.sm().mma().issue(cta_, ws_, TmemShiftInstr{at, cta_group == 2}, t);
  ws_.tcgen05_done = std::max(ws_.tcgen05_done, done);
}

void Warp::tcgen05_commit(MBarrierRef bar, std::uint16_t multicast_mask) {
  const char* op = multicast_mask ? "tcgen05.commit.multicast::cluster" : "tcgen05.commit";
  const std::uint16_t targets = mask_or_self(multicast_mask, op);
  const Cluster& cluster = cta_.cluster();
  for (std::uint32_t r = 0; r < cluster.size(); ++r)
    if (targets >> r & 1u) cluster.cta(r).live_barrier(ws_, bar.offset, op);
  const Cycle t = issue(config().mma.issue_cycles);
  // The tensor pipe signals every barrier of the mask itself: the same arrive latency for each.
  const Cycle at = std::max(t, ws_.tcgen05_done) + config().mbarrier.arrive_latency;
  for (std::uint32_t r = 0; r < cluster.size(); ++r)
    if (targets >> r & 1u) cluster.cta(r).barrier_op_at(ws_, at, BarrierOp::CommitArrive, bar.offset, 1);
  if (cta_.tracer())
    trace_op(multicast_mask ? fmt::format("tcgen05.commit.multicast {:#06x} -> {}", multicast_mask, cta_.barrier_label(bar.offset))
                            : fmt::format("tcgen05.commit -> {}", cta_.barrier_label(bar.offset)),
             t, 1);
}

void Warp::tcgen05_fence_before_thread_sync() { issue(config().warp.issue_cycles); }
void Warp::tcgen05_fence_after_thread_sync() { issue(config().warp.issue_cycles); }

Warp::WaitAwaiter Warp::wait_until(Cycle at) {
  return WaitAwaiter{ws_, WaitKind::Delay, kDelayTmem, at > ws_.ready ? at - ws_.ready : 0};
}

Warp::WaitAwaiter Warp::tcgen05_wait_ld() {
  cta_.race_check([&cta = cta_, &ws = ws_] { races::tmem_wait_ld(cta, ws); });
  if (functional()) {  // TMEM holds data only then (timing mode leaves the vectors' cold line alone)
    const std::uint32_t* v = ws_.ld_values.data();
    for (const WarpState::PendingLoad& p : ws_.ld_pending) {
      std::copy(v, v + p.count, p.dst);
      v += p.count;
    }
    ws_.ld_pending.clear();
    ws_.ld_values.clear();
  }
  return wait_until(ws_.tmem_ld_done);
}
Warp::WaitAwaiter Warp::tcgen05_wait_st() {
  cta_.race_check([&cta = cta_, &ws = ws_] { races::tmem_wait_st(cta, ws); });
  return wait_until(ws_.tmem_st_done);
}

std::uint32_t Warp::ld_shared_u32(SmemAddr src) {
  std::uint32_t v = 0;
  ld_shared(src, std::as_writable_bytes(std::span<std::uint32_t>(&v, 1)));
  return v;
}

}  // namespace bwsim

namespace bwsim {

Cycle Warp::tmem_transfer(const char* op, TmemAddr addr, TmemShape shape, std::uint32_t num, std::size_t regs,
                          bool pack16, std::uint32_t half_split) {
  require_tcgen05(op);
  const std::uint32_t per_thread = tmem_regs_per_thread(shape, num);
  if (per_thread == 0 || regs != 32u * per_thread || (shape != TmemShape::S16x32bx2 && half_split != 0)) [[unlikely]]
    tmem_transfer_invalid(op, shape, num, regs, half_split);
  const std::uint32_t columns = tmem_columns(shape, num, pack16) + half_split;
  cta_.tmem_check_access(ws_, op, addr.lane(), tmem_lanes(shape), addr.column(), columns, true);

  const Cycle t = issue(config().warp.issue_cycles);
  const std::uint32_t bytes = 32u * per_thread * 4u;
  const std::uint32_t bw = config().tmem.bytes_per_cycle;
  Cycle& port = cta_.sm().tmem_port_free(ws_.index % 4);
  const Cycle start = std::max(t + config().warp.issue_cycles, port);
  port = start + (bytes + bw - 1) / bw;
  cta_.sm().pipe_stats().tmem_port_cycles += port - start;
  if (cta_.tracer()) trace_tmem_transfer(op, addr, shape, num, pack16, bytes, t, start, port);
  return port;
}

void Warp::tmem_transfer_invalid(const char* op, TmemShape shape, std::uint32_t num, std::size_t regs,
                                 std::uint32_t half_split) {
  const std::uint32_t per_thread = tmem_regs_per_thread(shape, num);
  if (per_thread == 0)
    cta_.fail(Rule::TmemAccessInvalid, ws_, op, fmt::format(".{}.x{} is not a valid shape/count", name_of(shape), num),
              ".num is a power of 2 in 1..128 with at most 128 registers per thread");
  if (regs != 32u * per_thread)
    cta_.fail(Rule::TmemAccessInvalid, ws_, op,
              fmt::format("{} registers given; .{}.x{} moves {} per thread (32 x {} = {})", regs, name_of(shape), num,
                          per_thread, per_thread, 32 * per_thread),
              "size the register span as 32 lanes x registers per thread");
  if (shape != TmemShape::S16x32bx2 && half_split != 0)
    cta_.fail(Rule::TmemAccessInvalid, ws_, op, "a half-split offset applies to .16x32bx2 only", "");
  throw std::logic_error("tmem_transfer_invalid: the access is valid");
}

void Warp::trace_tmem_transfer(const char* op, TmemAddr addr, TmemShape shape, std::uint32_t num, bool pack16,
                               std::uint32_t bytes, Cycle issued, Cycle start, Cycle end) {
  const std::string name = fmt::format("{}.{}.x{}{} lanes {}.. columns {}..", op, name_of(shape), num,
                                       pack16 ? ".16b" : "", addr.lane(), addr.column());
  trace_op(name, issued, end - issued);
  cta_.tracer()->span(static_cast<int>(sm_idx()), kTmemTrack, name, start, end - start,
                      fmt::format(R"("warp":{},"bytes":{})", ws_.index, bytes));
}

namespace {
// Calls fn(register index, lane, first column) for every register of a warp's access, in the
// registers' lane-major order; the column is the 32-bit column, or the first of a 16-bit pair.
template <class Fn>
void for_each_register(TmemAddr base, TmemShape shape, std::uint32_t per_thread, bool pack16,
                       std::uint32_t half_split, Fn fn) {
  for (std::uint32_t t = 0; t < 32; ++t)
    for (std::uint32_t r = 0; r < per_thread; ++r) {
      const TmemCell c = tmem_cell(shape, t, r, half_split);
      fn(t * per_thread + r, base.lane() + c.lane, base.column() + (pack16 ? 2 * c.column : c.column));
    }
}
}  // namespace

void Warp::tcgen05_ld(TmemAddr src, TmemShape shape, std::uint32_t num, std::span<std::uint32_t> regs, bool pack16,
                      std::uint32_t half_split) {
  const Cycle end = tmem_transfer("tcgen05.ld", src, shape, num, regs.size(), pack16, half_split);
  cta_.race_check_absorbing(
      TmemLoadRaceCheck{&cta_, &ws_, src.column(), src.column() + tmem_columns(shape, num, pack16) + half_split});
  ws_.tmem_ld_done = std::max(ws_.tmem_ld_done, end + config().tmem.access_latency);
  Tmem& tmem = cta_.sm().tmem();
  if (!tmem.holds_data()) return;
  // The values are read now and delivered by tcgen05.wait::ld; until then the registers hold
  // kTmemLoadPoison (an fp32 NaN), so a use before the wait shows up in the results.
  const std::size_t base = ws_.ld_values.size();
  ws_.ld_values.resize(base + regs.size());
  for_each_register(src, shape, static_cast<std::uint32_t>(regs.size() / 32), pack16, half_split,
                    [&](std::uint32_t i, std::uint32_t lane, std::uint32_t col) {
                      ws_.ld_values[base + i] = pack16 ? (tmem.cell(lane, col) & 0xFFFFu) | (tmem.cell(lane, col + 1) << 16)
                                                       : tmem.cell(lane, col);
                    });
  ws_.ld_pending.push_back(WarpState::PendingLoad{regs.data(), static_cast<std::uint32_t>(regs.size())});
  std::fill(regs.begin(), regs.end(), kTmemLoadPoison);
}

void Warp::tcgen05_st(TmemAddr dst, TmemShape shape, std::uint32_t num, std::span<const std::uint32_t> regs,
                      bool unpack16, std::uint32_t half_split) {
  const Cycle end = tmem_transfer("tcgen05.st", dst, shape, num, regs.size(), unpack16, half_split);
  cta_.race_check([&cta = cta_, &ws = ws_, b = dst.column(), e = dst.column() + tmem_columns(shape, num, unpack16) + half_split] {
    races::tmem_store(cta, ws, b, e);
  });
  ws_.tmem_st_done = std::max(ws_.tmem_st_done, end + config().tmem.access_latency);
  Tmem& tmem = cta_.sm().tmem();
  if (!tmem.holds_data()) return;
  for_each_register(dst, shape, static_cast<std::uint32_t>(regs.size() / 32), unpack16, half_split,
                    [&](std::uint32_t i, std::uint32_t lane, std::uint32_t col) {
                      if (unpack16) {
                        tmem.cell(lane, col) = regs[i] & 0xFFFFu;  // each 16-bit value lands zero-extended
                        tmem.cell(lane, col + 1) = regs[i] >> 16;
                      } else {
                        tmem.cell(lane, col) = regs[i];
                      }
                    });
}

}  // namespace bwsim
