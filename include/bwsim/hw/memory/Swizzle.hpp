#pragma once
// The TMA/UMMA shared-memory swizzle: Swizzle<B,4,3> in CuTe terms. 16-byte chunks of each
// 128-byte row are XOR-permuted by bits 7.. of the byte offset.
#include <cstdint>
#include <optional>
#include <string_view>

namespace bwsim {

enum class Swizzle : std::uint8_t { None, B32, B64, B128 };

// Byte offset within the box -> byte offset in SMEM (relative to the atom-aligned destination).
constexpr std::uint32_t swizzle_offset(Swizzle s, std::uint32_t o) {
  switch (s) {
    case Swizzle::None: return o;
    case Swizzle::B32: return o ^ (((o >> 7) & 1u) << 4);
    case Swizzle::B64: return o ^ (((o >> 7) & 3u) << 4);
    case Swizzle::B128: return o ^ (((o >> 7) & 7u) << 4);
  }
  return o;
}

// Span in bytes of the innermost box extent the swizzle allows (0: unlimited).
constexpr std::uint32_t swizzle_span(Swizzle s) {
  switch (s) {
    case Swizzle::None: return 0;
    case Swizzle::B32: return 32;
    case Swizzle::B64: return 64;
    case Swizzle::B128: return 128;
  }
  return 0;
}

// Required alignment of an SMEM destination/source: the swizzle atom (8 rows x span), or 128 B.
constexpr std::uint32_t swizzle_alignment(Swizzle s) { return s == Swizzle::None ? 128u : 8u * swizzle_span(s); }

std::string_view name_of(Swizzle s);
std::optional<Swizzle> parse_swizzle(std::string_view name);

}  // namespace bwsim
