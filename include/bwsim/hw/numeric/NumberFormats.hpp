#pragma once
// Conversions between the MMA's element formats and float: exact decoding of fp16, bf16, tf32,
// e4m3, e5m2, the OCP MX FP6 (e2m3: bias 1, max 7.5; e3m2: bias 3, max 28) and FP4 (e2m1: bias 1,
// values 0, 0.5, 1, 1.5, 2, 3, 4, 6) formats, none of which has an infinity or NaN, and of the
// block-scale factors ue8m0 (2^(e-127); 0xFF is NaN) and ue4m3 (e4m3 read without its sign bit);
// and round-to-nearest-even encoding (fp8/fp6/fp4 saturate to the largest finite value, as
// cvt.satfinite does; fp16/bf16 overflow to infinity).
#include <cstddef>
#include <cstdint>

#include "bwsim/hw/numeric/DataType.hpp"

namespace bwsim {

float half_to_float(std::uint16_t h);
float bf16_to_float(std::uint16_t b);
float e4m3_to_float(std::uint8_t v);
float e5m2_to_float(std::uint8_t v);
std::uint16_t float_to_half(float f);
std::uint16_t float_to_bf16(float f);
std::uint8_t float_to_e4m3(float f);
std::uint8_t float_to_e5m2(float f);
float e2m3_to_float(std::uint8_t v);  // the low 6 bits
float e3m2_to_float(std::uint8_t v);  // the low 6 bits
float e2m1_to_float(std::uint8_t v);  // the low 4 bits
float ue8m0_to_float(std::uint8_t v);
float ue4m3_to_float(std::uint8_t v);
std::uint8_t float_to_e2m3(float f);
std::uint8_t float_to_e3m2(float f);
std::uint8_t float_to_e2m1(float f);

// The element of type `t` at `p` as a float (tf32 reads the fp32 container and drops the low
// 13 mantissa bits; FP6/FP4 read their 8-bit container's low bits; u8/s8 exactly). `t` must be a
// floating type or u8/s8.
float load_as_float(DataType t, const std::byte* p);
// Stores `f` as type `t` at `p` (f16, bf16, f32, e4m3, e5m2, e2m3, e3m2, e2m1 in its container).
void store_from_float(DataType t, float f, std::byte* p);

}  // namespace bwsim
