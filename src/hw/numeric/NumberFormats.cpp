#include "bwsim/hw/numeric/NumberFormats.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace bwsim {
namespace {

// A small float format: `exp_bits` exponent bits with bias 2^(exp_bits-1)-1, `man_bits` mantissa.
float decode_small(std::uint32_t bits, int exp_bits, int man_bits, bool ieee_specials) {
  const std::uint32_t sign = bits >> (exp_bits + man_bits);
  const std::uint32_t e = (bits >> man_bits) & ((1u << exp_bits) - 1);
  const std::uint32_t m = bits & ((1u << man_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  float v;
  if (ieee_specials && e == (1u << exp_bits) - 1)
    v = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (e == 0)
    v = std::ldexp(static_cast<float>(m), 1 - bias - man_bits);
  else
    v = std::ldexp(static_cast<float>(m | (1u << man_bits)), static_cast<int>(e) - bias - man_bits);
  return sign ? -v : v;
}

// Round-to-nearest-even of |f| onto a format's grid; `max_finite` saturates (fp8) or overflows to
// `overflow` (fp16). Returns the encoded magnitude.
std::uint32_t encode_small(float a, int exp_bits, int man_bits, std::uint32_t max_code, std::uint32_t overflow_code) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const float max_finite = decode_small(max_code, exp_bits, man_bits, false);
  if (!(a < std::numeric_limits<float>::infinity())) return overflow_code;
  int e;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  int exp = std::max(e - 1, 1 - bias);  // unbiased exponent of the grid (subnormal floor)
  const float quantum = std::ldexp(1.0f, exp - man_bits);
  const float q = std::nearbyint(a / quantum) * quantum;  // the FPU's default mode is round-to-nearest-even
  if (q > max_finite) return overflow_code;
  // Re-encode the rounded value exactly.
  if (q == 0) return 0;
  std::frexp(q, &e);
  exp = e - 1;
  if (exp < 1 - bias) return static_cast<std::uint32_t>(q / std::ldexp(1.0f, 1 - bias - man_bits));
  const auto m = static_cast<std::uint32_t>(std::ldexp(q, man_bits - exp)) - (1u << man_bits);
  return (static_cast<std::uint32_t>(exp + bias) << man_bits) | m;
}

}  // namespace

float half_to_float(std::uint16_t h) { return decode_small(h, 5, 10, true); }
float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }
float e4m3_to_float(std::uint8_t v) {
  if ((v & 0x7F) == 0x7F) return std::numeric_limits<float>::quiet_NaN();  // e4m3 has NaN only, no infinity
  return decode_small(v, 4, 3, false);
}
float e5m2_to_float(std::uint8_t v) { return decode_small(v, 5, 2, true); }

std::uint16_t float_to_half(float f) {
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return 0x7E00;
  return sign | static_cast<std::uint16_t>(encode_small(std::fabs(f), 5, 10, 0x7BFF, 0x7C00));
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

std::uint8_t float_to_e4m3(float f) {
  const std::uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7F;
  return sign | static_cast<std::uint8_t>(encode_small(std::fabs(f), 4, 3, 0x7E, 0x7E));
}

std::uint8_t float_to_e5m2(float f) {
  const std::uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7F;
  return sign | static_cast<std::uint8_t>(encode_small(std::fabs(f), 5, 2, 0x7B, 0x7B));
}

// The MX formats have no infinity or NaN: every code is finite, and encoding saturates.
float e2m3_to_float(std::uint8_t v) { return decode_small(v & 0x3Fu, 2, 3, false); }
float e3m2_to_float(std::uint8_t v) { return decode_small(v & 0x3Fu, 3, 2, false); }
float e2m1_to_float(std::uint8_t v) { return decode_small(v & 0x0Fu, 2, 1, false); }
float ue8m0_to_float(std::uint8_t v) {
  return v == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, static_cast<int>(v) - 127);
}
float ue4m3_to_float(std::uint8_t v) { return e4m3_to_float(v & 0x7Fu); }

namespace {
// The sign bit above a saturating magnitude encoding; NaN encodes as the largest finite value.
std::uint8_t encode_mx(float f, int exp_bits, int man_bits) {
  const std::uint32_t max_code = (1u << (exp_bits + man_bits)) - 1;
  const std::uint8_t sign = std::signbit(f) ? static_cast<std::uint8_t>(1u << (exp_bits + man_bits)) : 0;
  if (std::isnan(f)) return static_cast<std::uint8_t>(max_code);
  return sign | static_cast<std::uint8_t>(encode_small(std::fabs(f), exp_bits, man_bits, max_code, max_code));
}
}  // namespace

std::uint8_t float_to_e2m3(float f) { return encode_mx(f, 2, 3); }
std::uint8_t float_to_e3m2(float f) { return encode_mx(f, 3, 2); }
std::uint8_t float_to_e2m1(float f) { return encode_mx(f, 2, 1); }

float load_as_float(DataType t, const std::byte* p) {
  std::uint32_t u32;
  std::uint16_t u16;
  switch (t) {
    case DataType::F16: std::memcpy(&u16, p, 2); return half_to_float(u16);
    case DataType::BF16: std::memcpy(&u16, p, 2); return bf16_to_float(u16);
    case DataType::F32: std::memcpy(&u32, p, 4); return std::bit_cast<float>(u32);
    case DataType::TF32: std::memcpy(&u32, p, 4); return std::bit_cast<float>(u32 & ~0x1FFFu);
    case DataType::E4M3: return e4m3_to_float(static_cast<std::uint8_t>(*p));
    case DataType::E5M2: return e5m2_to_float(static_cast<std::uint8_t>(*p));
    case DataType::E2M3: return e2m3_to_float(static_cast<std::uint8_t>(*p));
    case DataType::E3M2: return e3m2_to_float(static_cast<std::uint8_t>(*p));
    case DataType::E2M1: return e2m1_to_float(static_cast<std::uint8_t>(*p));
    case DataType::UE8M0: return ue8m0_to_float(static_cast<std::uint8_t>(*p));
    case DataType::UE4M3: return ue4m3_to_float(static_cast<std::uint8_t>(*p));
    case DataType::U8: return static_cast<float>(static_cast<std::uint8_t>(*p));
    case DataType::S8: return static_cast<float>(static_cast<std::int8_t>(*p));
    default: return 0.0f;
  }
}

void store_from_float(DataType t, float f, std::byte* p) {
  std::uint16_t u16;
  switch (t) {
    case DataType::F16: u16 = float_to_half(f); std::memcpy(p, &u16, 2); return;
    case DataType::BF16: u16 = float_to_bf16(f); std::memcpy(p, &u16, 2); return;
    case DataType::F32: std::memcpy(p, &f, 4); return;
    case DataType::E4M3: *p = static_cast<std::byte>(float_to_e4m3(f)); return;
    case DataType::E5M2: *p = static_cast<std::byte>(float_to_e5m2(f)); return;
    case DataType::E2M3: *p = static_cast<std::byte>(float_to_e2m3(f)); return;
    case DataType::E3M2: *p = static_cast<std::byte>(float_to_e3m2(f)); return;
    case DataType::E2M1: *p = static_cast<std::byte>(float_to_e2m1(f)); return;
    default: return;
  }
}

}  // namespace bwsim
