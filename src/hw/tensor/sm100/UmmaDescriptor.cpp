#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

constexpr std::uint64_t field(std::uint64_t raw, unsigned lo, unsigned bits) { return (raw >> lo) & ((1ull << bits) - 1); }
constexpr std::uint64_t put(std::uint64_t value, unsigned lo, unsigned bits) { return (value & ((1ull << bits) - 1)) << lo; }

// SMEM descriptor bit positions (PTX ISA, tcgen05 "Shared memory descriptor").
constexpr unsigned kStartLo = 0, kLboLo = 16, kSboLo = 32, kVersionLo = 46, kBaseLo = 49, kLboModeLo = 52, kLayoutLo = 61;
constexpr std::uint64_t kVersion = 1;  // bits 46-48 hold the constant 0b001 on SM100

// Instruction descriptor bit positions (PTX ISA, tcgen05 "Instruction descriptor"), both layouts.
constexpr unsigned kSelectorLo = 0, kSparseLo = 2, kSaturateLo = 3, kDFormatLo = 4, kAFormatLo = 7, kBFormatLo = 10,
                   kNegALo = 13, kNegBLo = 14, kMajorALo = 15, kMajorBLo = 16, kNLo = 17, kMLo = 24, kShiftLo = 30;
constexpr unsigned kSfBLo = 4, kScaleTypeLo = 23, kM7Lo = 27, kSfALo = 29, kK96Lo = 31;  // block-scaled
// Bits that must be 0: dense 6, 23, 29; block-scaled 0-1, 3, 6, 24-26 (and 12 for mxf4*).
constexpr std::uint32_t kDenseReserved = (1u << 6) | (1u << 23) | (1u << 29);
constexpr std::uint32_t kScaledReserved = 0x3u | (1u << 3) | (1u << 6) | (0x7u << 24);

bool packed_fp4_kind(MmaKind k) { return k == MmaKind::MXF4 || k == MmaKind::MXF4NVF4; }
bool sub_byte(DataType t) { return t == DataType::E2M3 || t == DataType::E3M2 || t == DataType::E2M1; }

std::optional<std::uint32_t> ab_code(MmaKind kind, DataType t) {
  switch (kind) {
    case MmaKind::F16:
      if (t == DataType::F16) return 0;
      if (t == DataType::BF16) return 1;
      return std::nullopt;
    case MmaKind::TF32: return t == DataType::TF32 ? std::optional<std::uint32_t>(2) : std::nullopt;
    case MmaKind::F8F6F4:
    case MmaKind::MXF8F6F4:
      switch (t) {
        case DataType::E4M3: return 0;
        case DataType::E5M2: return 1;
        case DataType::E2M3: return 3;
        case DataType::E3M2: return 4;
        case DataType::E2M1: return 5;
        default: return std::nullopt;
      }
    case MmaKind::I8:
      if (t == DataType::U8) return 0;
      if (t == DataType::S8) return 1;
      return std::nullopt;
    case MmaKind::MXF4:
    case MmaKind::MXF4NVF4: return t == DataType::E2M1 ? std::optional<std::uint32_t>(1) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<DataType> ab_type(MmaKind kind, std::uint32_t code) {
  for (DataType t : {DataType::F16, DataType::BF16, DataType::TF32, DataType::E4M3, DataType::E5M2, DataType::E2M3,
                     DataType::E3M2, DataType::E2M1, DataType::U8, DataType::S8})
    if (ab_code(kind, t) == code) return t;
  return std::nullopt;
}

std::optional<std::uint32_t> d_code(MmaKind kind, DataType t) {
  if (t == DataType::F32 && kind != MmaKind::I8) return 1;
  if (t == DataType::F16 && (kind == MmaKind::F16 || kind == MmaKind::F8F6F4)) return 0;
  if (t == DataType::S32 && kind == MmaKind::I8) return 2;
  return std::nullopt;
}

}  // namespace

SmemDescriptor encode(const SmemDescriptorFields& f) {
  return SmemDescriptor{put(f.start_address >> 4, kStartLo, 14) | put(f.leading_byte_offset >> 4, kLboLo, 14) |
                        put(f.stride_byte_offset >> 4, kSboLo, 14) | put(kVersion, kVersionLo, 3) |
                        put(f.base_offset, kBaseLo, 3) | put(f.lbo_mode, kLboModeLo, 1) |
                        put(static_cast<std::uint64_t>(f.layout), kLayoutLo, 3)};
}

std::optional<std::string> decode(SmemDescriptor d, SmemDescriptorFields& out) {
  if (field(d.raw, kVersionLo, 3) != kVersion)
    return fmt::format("SMEM descriptor {:#018x}: bits 46-48 must hold the fixed constant 0b001, got {:#b}", d.raw,
                       field(d.raw, kVersionLo, 3));
  const auto layout = static_cast<std::uint32_t>(field(d.raw, kLayoutLo, 3));
  if (layout != 0 && layout != 1 && layout != 2 && layout != 4 && layout != 6)
    return fmt::format("SMEM descriptor {:#018x}: layout type {} is not a valid swizzle code (0, 1, 2, 4, 6)", d.raw,
                       layout);
  if (layout == static_cast<std::uint32_t>(UmmaLayout::Swizzle128BBase32B))
    return fmt::format("SMEM descriptor {:#018x}: the 128B-with-32B-atom layout is not modeled", d.raw);
  if (field(d.raw, kLboModeLo, 1))
    return fmt::format("SMEM descriptor {:#018x}: LBO mode 1 is not modeled", d.raw);
  out.start_address = start_address_of(d);
  out.leading_byte_offset = static_cast<std::uint32_t>(field(d.raw, kLboLo, 14) << 4);
  out.stride_byte_offset = static_cast<std::uint32_t>(field(d.raw, kSboLo, 14) << 4);
  out.base_offset = static_cast<std::uint32_t>(field(d.raw, kBaseLo, 3));
  out.lbo_mode = false;
  out.layout = static_cast<UmmaLayout>(layout);
  return std::nullopt;
}

Swizzle swizzle_of(UmmaLayout l) {
  switch (l) {
    case UmmaLayout::SwizzleNone: return Swizzle::None;
    case UmmaLayout::Swizzle32B: return Swizzle::B32;
    case UmmaLayout::Swizzle64B: return Swizzle::B64;
    case UmmaLayout::Swizzle128B:
    case UmmaLayout::Swizzle128BBase32B: return Swizzle::B128;
  }
  return Swizzle::None;
}

UmmaLayout umma_layout_of(Swizzle s) {
  switch (s) {
    case Swizzle::None: return UmmaLayout::SwizzleNone;
    case Swizzle::B32: return UmmaLayout::Swizzle32B;
    case Swizzle::B64: return UmmaLayout::Swizzle64B;
    case Swizzle::B128: return UmmaLayout::Swizzle128B;
  }
  return UmmaLayout::SwizzleNone;
}

namespace {
// Element (mn, k)'s byte offset from the start address before the swizzle, for swizzle `sw`.
std::uint32_t unswizzled_offset(const SmemDescriptorFields& f, Swizzle sw, Major major, std::uint32_t elem_bytes,
                                std::uint32_t mn, std::uint32_t k) {
  const std::uint32_t span = swizzle_span(sw);  // bytes per swizzle row; 0 without swizzle
  if (major == Major::K) {
    // ((8,m),(T,2k)) : ((span or 1T, SBO), (1, LBO or contiguous)): rows of an 8-row group are
    // one swizzle row (or one 16-byte core-matrix row) apart; 8-row groups are SBO apart.
    const std::uint32_t kb = k * elem_bytes;
    if (sw == Swizzle::None)
      return (mn % 8) * 16 + (mn / 8) * f.stride_byte_offset + kb % 16 + (kb / 16) * f.leading_byte_offset;
    return (mn % 8) * span + (mn / 8) * f.stride_byte_offset + kb;
  }
  // ((T,n,m),(8,k)) : ((1,T,LBO or SBO),(row,…)): M/N contiguous within one swizzle row (16 bytes
  // without swizzle); 8 K-rows form the atom; atoms repeat along M/N and along K.
  const std::uint32_t mb = mn * elem_bytes;
  if (sw == Swizzle::None)
    return mb % 16 + (mb / 16) * f.stride_byte_offset + (k % 8) * 16 + (k / 8) * f.leading_byte_offset;
  return mb % span + (mb / span) * f.leading_byte_offset + (k % 8) * span + (k / 8) * f.stride_byte_offset;
}
}  // namespace

std::uint32_t operand_address(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t mn,
                              std::uint32_t k) {
  // The swizzle permutes 16-byte chunks by address bits 7.. of the absolute SMEM address, so
  // a start address advanced inside an atom (the K sub-blocks of a 128B row) reads the right bytes.
  const Swizzle sw = swizzle_of(f.layout);
  return swizzle_offset(sw, f.start_address + unswizzled_offset(f, sw, major, elem_bytes, mn, k));
}

SpanOffsets operand_span_offsets(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes,
                                 std::uint32_t rows, std::uint32_t k) {
  const Swizzle sw = swizzle_of(f.layout);
  SpanOffsets o{~0u, 0};
  for (std::uint32_t r : {0u, rows - 1})
    for (std::uint32_t kk : {0u, k - 1}) {
      const std::uint32_t off = unswizzled_offset(f, sw, major, elem_bytes, r, kk);
      o.lo = std::min(o.lo, off);
      o.hi = std::max(o.hi, off);
    }
  return o;
}

// Every swizzle changes address bits 4-6 only, so a corner's 128-byte row is that of its
// unswizzled address: the swizzle need not be applied. Widening to 128-byte rows keeps the order
// of addresses, so the lowest and highest corners bound the span.
SmemSpan operand_span(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t rows,
                      std::uint32_t k) {
  return span_at(f.start_address, operand_span_offsets(f, major, elem_bytes, rows, k));
}

std::string_view name_of(MmaKind k) {
  switch (k) {
    case MmaKind::F16: return "f16";
    case MmaKind::TF32: return "tf32";
    case MmaKind::F8F6F4: return "f8f6f4";
    case MmaKind::I8: return "i8";
    case MmaKind::MXF8F6F4: return "mxf8f6f4";
    case MmaKind::MXF4: return "mxf4";
    case MmaKind::MXF4NVF4: return "mxf4nvf4";
  }
  return "?";
}

bool is_block_scaled(MmaKind k) { return k == MmaKind::MXF8F6F4 || packed_fp4_kind(k); }

std::uint32_t mma_k(MmaKind kind) {
  switch (kind) {
    case MmaKind::F16: return 16;
    case MmaKind::TF32: return 8;
    case MmaKind::F8F6F4:
    case MmaKind::I8:
    case MmaKind::MXF8F6F4: return 32;
    case MmaKind::MXF4:
    case MmaKind::MXF4NVF4: return 64;
  }
  return 0;
}

std::uint32_t operand_element_bits(MmaKind kind, DataType t) {
  if (packed_fp4_kind(kind)) return 4;
  if (t == DataType::E2M1) return 4;
  if (t == DataType::E2M3 || t == DataType::E3M2) return 6;
  return 8 * size_of(t);
}

OperandBits operand_bits(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t, std::uint32_t row,
                         std::uint32_t k) {
  if (packed_fp4_kind(kind)) return {operand_address(f, Major::K, 1, row, k / 2), 4 * (k % 2)};
  if (sub_byte(t)) {  // 16 packed elements at the start of each 16-byte chunk of K
    const std::uint32_t bit = (k % 16) * operand_element_bits(kind, t);
    return {operand_address(f, Major::K, 1, row, k / 16 * 16) + bit / 8, bit % 8};
  }
  return {operand_address(f, major, size_of(t), row, k), 0};
}

SpanOffsets mma_operand_span_offsets(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t,
                                     std::uint32_t rows, std::uint32_t k_times) {
  const std::uint32_t k = mma_k(kind) * k_times;
  if (packed_fp4_kind(kind)) return operand_span_offsets(f, Major::K, 1, rows, k / 2);
  return operand_span_offsets(f, major, size_of(t), rows, k);
}

SmemSpan mma_operand_span(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t, std::uint32_t rows,
                          std::uint32_t k_times) {
  return span_at(f.start_address, mma_operand_span_offsets(f, major, kind, t, rows, k_times));
}

InstrDescriptor encode(MmaKind kind, const InstrDescriptorFields& f) {
  const auto a = ab_code(kind, f.a_type), b = ab_code(kind, f.b_type);
  if (!a || !b)
    throw InputError(fmt::format("kind::{} takes no {} x {} operands", name_of(kind), name_of(f.a_type),
                                 name_of(f.b_type)));
  const std::uint64_t common = put(f.sparse, kSparseLo, 1) | put(*a, kAFormatLo, 3) | put(*b, kBFormatLo, 3) |
                               put(f.negate_a, kNegALo, 1) | put(f.negate_b, kNegBLo, 1) |
                               put(f.a_major == Major::MN, kMajorALo, 1) | put(f.b_major == Major::MN, kMajorBLo, 1) |
                               put(f.n >> 3, kNLo, 6);
  if (is_block_scaled(kind)) {
    if (f.scale_type != DataType::UE8M0 && f.scale_type != DataType::UE4M3)
      throw InputError(fmt::format("kind::{} takes ue8m0 or ue4m3 scale factors, not {}", name_of(kind),
                                   name_of(f.scale_type)));
    return InstrDescriptor{static_cast<std::uint32_t>(
        common | put(f.b_sf_id, kSfBLo, 2) | put(f.scale_type == DataType::UE8M0, kScaleTypeLo, 1) |
        put(f.m >> 7, kM7Lo, 2) | put(f.a_sf_id, kSfALo, 2) | put(f.k96, kK96Lo, 1))};
  }
  const auto d = d_code(kind, f.d_type);
  if (!d) throw InputError(fmt::format("kind::{} accumulates in no {}", name_of(kind), name_of(f.d_type)));
  return InstrDescriptor{static_cast<std::uint32_t>(common | put(f.sparse_selector, kSelectorLo, 2) |
                                                    put(f.saturate, kSaturateLo, 1) | put(*d, kDFormatLo, 2) |
                                                    put(f.m >> 4, kMLo, 5) | put(f.max_shift, kShiftLo, 2))};
}

std::optional<std::string> decode(MmaKind kind, InstrDescriptor d, InstrDescriptorFields& out) {
  const std::uint64_t raw = d.raw;
  const bool scaled = is_block_scaled(kind);
  // Formatted only for an error: decode runs once per MMA.
  const auto what = [&] { return fmt::format("instruction descriptor {:#010x} (kind::{})", d.raw, name_of(kind)); };
  const std::uint32_t reserved = (scaled ? kScaledReserved | (packed_fp4_kind(kind) ? 1u << 12 : 0u) : kDenseReserved);
  if (d.raw & reserved) return fmt::format("{}: reserved bits {:#010x} are set", what(), d.raw & reserved);
  const unsigned b_bits = packed_fp4_kind(kind) ? 2 : 3;
  const auto a = ab_type(kind, static_cast<std::uint32_t>(field(raw, kAFormatLo, 3)));
  const auto b = ab_type(kind, static_cast<std::uint32_t>(field(raw, kBFormatLo, b_bits)));
  if (!a) return fmt::format("{}: A format code {} is not one of the kind's", what(), field(raw, kAFormatLo, 3));
  if (!b) return fmt::format("{}: B format code {} is not one of the kind's", what(), field(raw, kBFormatLo, b_bits));
  InstrDescriptorFields f;
  f.a_type = *a;
  f.b_type = *b;
  f.negate_a = field(raw, kNegALo, 1);
  f.negate_b = field(raw, kNegBLo, 1);
  f.a_major = field(raw, kMajorALo, 1) ? Major::MN : Major::K;
  f.b_major = field(raw, kMajorBLo, 1) ? Major::MN : Major::K;
  f.n = static_cast<std::uint32_t>(field(raw, kNLo, 6) << 3);
  f.sparse = field(raw, kSparseLo, 1);
  // PTX: transpose only for 8/16/32-bit elements (FP6/FP4 are K-major only, kind::mxf4* too).
  if ((f.a_major == Major::MN && (sub_byte(f.a_type) || packed_fp4_kind(kind))) ||
      (f.b_major == Major::MN && (sub_byte(f.b_type) || packed_fp4_kind(kind))))
    return fmt::format("{}: transpose (bits 15/16) is set for an FP6/FP4 operand, which is K-major only", what());
  if (kind == MmaKind::I8 && (f.negate_a || f.negate_b))
    return fmt::format("{}: negate (bits 13/14) is not allowed for kind::i8", what());
  if (scaled) {
    f.d_type = DataType::F32;
    f.b_sf_id = static_cast<std::uint32_t>(field(raw, kSfBLo, 2));
    f.a_sf_id = static_cast<std::uint32_t>(field(raw, kSfALo, 2));
    f.scale_type = field(raw, kScaleTypeLo, 1) ? DataType::UE8M0 : DataType::UE4M3;
    f.m = static_cast<std::uint32_t>(field(raw, kM7Lo, 2) << 7);
    f.k96 = field(raw, kK96Lo, 1);
    if (f.m == 0 || f.m > 256)
      return fmt::format("{}: M (bits 27-28, M >> 7) is {}: the block-scaled kinds take M = 128 or 256", what(),
                         f.m >> 7);
    if (f.scale_type == DataType::UE4M3 && kind != MmaKind::MXF4NVF4)
      return fmt::format("{}: scale type (bit 23) ue4m3 is only for kind::mxf4nvf4; kind::{} takes ue8m0", what(),
                         name_of(kind));
    if (f.k96 && !packed_fp4_kind(kind)) return fmt::format("{}: bit 31 (K = 96) is only for kind::mxf4*", what());
    if (f.k96) return fmt::format("{}: K = 96 (bit 31) exists on sm_103a only, not on this SM", what());
  } else {
    const auto dfmt = static_cast<std::uint32_t>(field(raw, kDFormatLo, 2));
    f.d_type = dfmt == 0 ? DataType::F16 : dfmt == 1 ? DataType::F32 : dfmt == 2 ? DataType::S32 : DataType::U8;
    if (!d_code(kind, f.d_type))
      return fmt::format("{}: D format {} is not one of the kind's ({})", what(), dfmt,
                         kind == MmaKind::I8 ? "s32 = 2" : "f32 = 1, or f16 = 0 for kind::f16/f8f6f4");
    if (f.d_type == DataType::F16)
      return fmt::format("{}: D format 0 (f16 accumulator) is not modeled; bwsim accumulates in f32 (1)", what());
    f.saturate = field(raw, kSaturateLo, 1);
    if (f.saturate && kind != MmaKind::I8) return fmt::format("{}: saturate (bit 3) applies to kind::i8 only", what());
    f.sparse_selector = static_cast<std::uint32_t>(field(raw, kSelectorLo, 2));
    f.m = static_cast<std::uint32_t>(field(raw, kMLo, 5) << 4);
    f.max_shift = static_cast<std::uint32_t>(field(raw, kShiftLo, 2));
    if (f.max_shift) return fmt::format("{}: the .ws maximum shift (bits 30-31) is not modeled", what());
    if (f.sparse_selector && !f.sparse) return fmt::format("{}: a sparsity selector (bits 0-1) without the sparse bit", what());
    // PTX: the selector must be 0 for kind::i8 and kind::f8f6f4; for f16 / tf32 it picks the
    // metadata column (CUTLASS and JAX use 0 and 1 only; what 2 and 3 select is in PTX's figures).
    if (f.sparse_selector && (kind == MmaKind::I8 || kind == MmaKind::F8F6F4))
      return fmt::format("{}: the sparsity selector (bits 0-1) must be 0 for kind::{}", what(), name_of(kind));
    if (f.sparse_selector > 1)
      return fmt::format("{}: sparsity selector {} (bits 0-1) is not modeled (bwsim models 0 and 1)", what(),
                         f.sparse_selector);
  }
  if (f.sparse && scaled) return fmt::format("{}: sparse block-scaled MMA (bit 2) is not modeled", what());
  out = f;
  return std::nullopt;
}

}  // namespace bwsim
