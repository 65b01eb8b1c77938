#include "bwsim/hw/tensor/sm90/Wgmma.hpp"

#include <fmt/format.h>

namespace bwsim {
namespace {

constexpr std::uint64_t field(std::uint64_t raw, unsigned lo, unsigned bits) { return (raw >> lo) & ((1ull << bits) - 1); }
constexpr std::uint64_t put(std::uint64_t value, unsigned lo, unsigned bits) { return (value & ((1ull << bits) - 1)) << lo; }

constexpr unsigned kStartLo = 0, kLboLo = 16, kSboLo = 32, kBaseLo = 49, kLayoutLo = 62;
// The bits no field uses (PTX ISA, wgmma "Matrix Descriptor Format"; CUTLASS GmmaDescriptor's
// unnamed bit-fields): 14-15, 30-31, 46-48 and 52-61.
constexpr std::uint64_t kReservedBits = (3ull << 14) | (3ull << 30) | (7ull << 46) | (0x3ffull << 52);

bool is_f8(DataType t) { return t == DataType::E4M3 || t == DataType::E5M2; }
bool is_f16(DataType t) { return t == DataType::F16 || t == DataType::BF16; }

}  // namespace

GmmaDescriptor encode(const GmmaDescriptorFields& f) {
  return GmmaDescriptor{put(f.start_address >> 4, kStartLo, 14) | put(f.leading_byte_offset >> 4, kLboLo, 14) |
                        put(f.stride_byte_offset >> 4, kSboLo, 14) | put(f.base_offset, kBaseLo, 3) |
                        put(static_cast<std::uint64_t>(f.layout), kLayoutLo, 2)};
}

std::optional<std::string> decode(GmmaDescriptor d, GmmaDescriptorFields& out) {
  out.start_address = static_cast<std::uint32_t>(field(d.raw, kStartLo, 14) << 4);
  out.leading_byte_offset = static_cast<std::uint32_t>(field(d.raw, kLboLo, 14) << 4);
  out.stride_byte_offset = static_cast<std::uint32_t>(field(d.raw, kSboLo, 14) << 4);
  out.base_offset = static_cast<std::uint32_t>(field(d.raw, kBaseLo, 3));
  out.layout = static_cast<GmmaLayout>(field(d.raw, kLayoutLo, 2));
  if (d.raw & kReservedBits)
    return fmt::format("GMMA descriptor {:#018x}: reserved bits {:#018x} are set", d.raw, d.raw & kReservedBits);
  if (out.base_offset != 0)
    return fmt::format("GMMA descriptor {:#018x}: base offset {} is not modeled", d.raw, out.base_offset);
  return std::nullopt;
}

SmemDescriptorFields operand_fields(const GmmaDescriptorFields& f) {
  UmmaLayout layout = UmmaLayout::SwizzleNone;
  switch (f.layout) {
    case GmmaLayout::Interleave: layout = UmmaLayout::SwizzleNone; break;
    case GmmaLayout::Swizzle128B: layout = UmmaLayout::Swizzle128B; break;
    case GmmaLayout::Swizzle64B: layout = UmmaLayout::Swizzle64B; break;
    case GmmaLayout::Swizzle32B: layout = UmmaLayout::Swizzle32B; break;
  }
  return SmemDescriptorFields{.start_address = f.start_address,
                              .leading_byte_offset = f.leading_byte_offset,
                              .stride_byte_offset = f.stride_byte_offset,
                              .base_offset = f.base_offset,
                              .lbo_mode = false,
                              .layout = layout};
}

GmmaDescriptor k_major_swizzle128_descriptor(std::uint32_t start_address) {
  return encode(GmmaDescriptorFields{.start_address = start_address,
                                     .leading_byte_offset = 16,
                                     .stride_byte_offset = 1024,
                                     .layout = GmmaLayout::Swizzle128B});
}

std::uint32_t wgmma_k(DataType t) { return 32 / size_of(t); }

std::optional<std::string> validate(const WgmmaShape& s) {
  const bool types = (is_f16(s.a_type) && s.b_type == s.a_type) || (is_f8(s.a_type) && is_f8(s.b_type));
  if (!types)
    return fmt::format("A {} x B {} with f32 accumulation is not a modeled wgmma type (f16, bf16, e4m3/e5m2)",
                       name_of(s.a_type), name_of(s.b_type));
  if (s.n < 8 || s.n > 256 || s.n % 8)
    return fmt::format("N = {} is not a wgmma shape: a multiple of 8 in 8..256", s.n);
  if (is_f8(s.a_type) && (s.a_major != Major::K || s.b_major != Major::K))
    return "8-bit operands must be K-major (the .trans immediates take 16-bit types only)";
  return std::nullopt;
}

std::string describe(const WgmmaShape& s) {
  return fmt::format("m64n{}k{}.f32.{}.{}", s.n, wgmma_k(s.a_type), name_of(s.a_type), name_of(s.b_type));
}

// D fragment: d[r] of lane l is row l/4 (+ 8 for r % 4 in {2, 3}) of the warp's 16, column
// 8 * (r / 4) + 2 * (l % 4) + r % 2.
FragmentCoord wgmma_accumulator_coord(std::uint32_t warp_in_group, std::uint32_t lane, std::uint32_t reg) {
  return FragmentCoord{16 * warp_in_group + lane / 4 + 8 * ((reg / 2) % 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

// A fragment: 16-bit elements a0..a7 as mma.m16n8k16's A (pairs: row, row + 8, k + 8, both);
// 8-bit elements a0..a15 as mma.m16n8k32's (quads of consecutive k).
FragmentCoord wgmma_a_coord(DataType t, std::uint32_t warp_in_group, std::uint32_t lane, std::uint32_t e) {
  const std::uint32_t row0 = 16 * warp_in_group + lane / 4;
  if (size_of(t) == 2) return FragmentCoord{row0 + 8 * ((e / 2) % 2), 2 * (lane % 4) + e % 2 + 8 * (e / 4)};
  return FragmentCoord{row0 + 8 * ((e / 4) % 2), 4 * (lane % 4) + e % 4 + 16 * (e / 8)};
}

}  // namespace bwsim
