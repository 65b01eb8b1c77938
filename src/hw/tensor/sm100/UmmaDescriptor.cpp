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

// Instruction descriptor bit positions (PTX ISA, tcgen05 "Instruction descriptor").
constexpr unsigned kSparseLo = 2, kSaturateLo = 3, kDFormatLo = 4, kAFormatLo = 7, kBFormatLo = 10, kNegALo = 13,
                   kNegBLo = 14, kMajorALo = 15, kMajorBLo = 16, kNLo = 17, kMLo = 24;

std::optional<std::uint32_t> ab_code(MmaKind kind, DataType t) {
  switch (kind) {
    case MmaKind::F16:
      if (t == DataType::F16) return 0;
      if (t == DataType::BF16) return 1;
      return std::nullopt;
    case MmaKind::TF32: return t == DataType::TF32 ? std::optional<std::uint32_t>(2) : std::nullopt;
    case MmaKind::F8F6F4:
      if (t == DataType::E4M3) return 0;
      if (t == DataType::E5M2) return 1;
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DataType> ab_type(MmaKind kind, std::uint32_t code) {
  for (DataType t : {DataType::F16, DataType::BF16, DataType::TF32, DataType::E4M3, DataType::E5M2})
    if (ab_code(kind, t) == code) return t;
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
  out.start_address = static_cast<std::uint32_t>(field(d.raw, kStartLo, 14) << 4);
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

std::uint32_t operand_address(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t mn,
                              std::uint32_t k) {
  const Swizzle sw = swizzle_of(f.layout);
  const std::uint32_t span = swizzle_span(sw);  // bytes per swizzle row; 0 without swizzle
  std::uint32_t offset = 0;
  if (major == Major::K) {
    // ((8,m),(T,2k)) : ((span or 1T, SBO), (1, LBO or contiguous)): rows of an 8-row group are
    // one swizzle row (or one 16-byte core-matrix row) apart; 8-row groups are SBO apart.
    const std::uint32_t kb = k * elem_bytes;
    if (sw == Swizzle::None)
      offset = (mn % 8) * 16 + (mn / 8) * f.stride_byte_offset + kb % 16 + (kb / 16) * f.leading_byte_offset;
    else
      offset = (mn % 8) * span + (mn / 8) * f.stride_byte_offset + kb;
  } else {
    // ((T,n,m),(8,k)) : ((1,T,LBO or SBO),(row,…)): M/N contiguous within one swizzle row (16 bytes
    // without swizzle); 8 K-rows form the atom; atoms repeat along M/N and along K.
    const std::uint32_t mb = mn * elem_bytes;
    if (sw == Swizzle::None)
      offset = mb % 16 + (mb / 16) * f.stride_byte_offset + (k % 8) * 16 + (k / 8) * f.leading_byte_offset;
    else
      offset = mb % span + (mb / span) * f.leading_byte_offset + (k % 8) * span + (k / 8) * f.stride_byte_offset;
  }
  // The swizzle permutes 16-byte chunks by address bits 7.. of the absolute SMEM address, so
  // a start address advanced inside an atom (the K sub-blocks of a 128B row) reads the right bytes.
  return swizzle_offset(sw, f.start_address + offset);
}

SmemSpan operand_span(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t rows,
                      std::uint32_t k) {
  SmemSpan s{~0u, 0};
  for (std::uint32_t r : {0u, rows - 1})
    for (std::uint32_t kk : {0u, k - 1}) {
      const std::uint32_t a = operand_address(f, major, elem_bytes, r, kk);
      s.begin = std::min(s.begin, a & ~127u);
      s.end = std::max(s.end, (a | 127u) + 1);
    }
  return s;
}

std::string_view name_of(MmaKind k) {
  switch (k) {
    case MmaKind::F16: return "f16";
    case MmaKind::TF32: return "tf32";
    case MmaKind::F8F6F4: return "f8f6f4";
  }
  return "?";
}

std::uint32_t mma_k(MmaKind kind) {
  switch (kind) {
    case MmaKind::F16: return 16;
    case MmaKind::TF32: return 8;
    case MmaKind::F8F6F4: return 32;
  }
  return 0;
}

InstrDescriptor encode(MmaKind kind, const InstrDescriptorFields& f) {
  const auto a = ab_code(kind, f.a_type), b = ab_code(kind, f.b_type);
  if (!a || !b)
    throw InputError(fmt::format("kind::{} takes no {} x {} operands", name_of(kind), name_of(f.a_type),
                                 name_of(f.b_type)));
  const std::uint32_t d = f.d_type == DataType::F32 ? 1 : 0;
  return InstrDescriptor{static_cast<std::uint32_t>(
      put(f.sparse, kSparseLo, 1) | put(f.saturate, kSaturateLo, 1) | put(d, kDFormatLo, 2) | put(*a, kAFormatLo, 3) |
      put(*b, kBFormatLo, 3) | put(f.negate_a, kNegALo, 1) | put(f.negate_b, kNegBLo, 1) |
      put(f.a_major == Major::MN, kMajorALo, 1) | put(f.b_major == Major::MN, kMajorBLo, 1) | put(f.n >> 3, kNLo, 6) |
      put(f.m >> 4, kMLo, 5))};
}

std::optional<std::string> decode(MmaKind kind, InstrDescriptor d, InstrDescriptorFields& out) {
  const std::uint64_t raw = d.raw;
  const auto a = ab_type(kind, static_cast<std::uint32_t>(field(raw, kAFormatLo, 3)));
  const auto b = ab_type(kind, static_cast<std::uint32_t>(field(raw, kBFormatLo, 3)));
  if (!a || !b)
    return fmt::format("instruction descriptor {:#010x}: A/B format codes {}/{} are not valid (or not modeled) for kind::{}",
                       d.raw, field(raw, kAFormatLo, 3), field(raw, kBFormatLo, 3), name_of(kind));
  const auto dfmt = field(raw, kDFormatLo, 2);
  if (dfmt != 1)
    return fmt::format("instruction descriptor {:#010x}: D format {} ({}) is not modeled; bwsim accumulates in f32 (1)",
                       d.raw, dfmt, dfmt == 0 ? "f16" : "reserved");
  if (field(raw, kSparseLo, 1)) return fmt::format("instruction descriptor {:#010x}: sparse MMA is not modeled", d.raw);
  if (field(raw, kSaturateLo, 1))
    return fmt::format("instruction descriptor {:#010x}: saturate applies to integer kinds only", d.raw);
  out.a_type = *a;
  out.b_type = *b;
  out.d_type = DataType::F32;
  out.negate_a = field(raw, kNegALo, 1);
  out.negate_b = field(raw, kNegBLo, 1);
  out.a_major = field(raw, kMajorALo, 1) ? Major::MN : Major::K;
  out.b_major = field(raw, kMajorBLo, 1) ? Major::MN : Major::K;
  out.n = static_cast<std::uint32_t>(field(raw, kNLo, 6) << 3);
  out.m = static_cast<std::uint32_t>(field(raw, kMLo, 5) << 4);
  out.sparse = false;
  out.saturate = false;
  return std::nullopt;
}

}  // namespace bwsim
