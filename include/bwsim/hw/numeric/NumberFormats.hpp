#pragma once
// Conversions between the MMA's element formats and float: exact decoding of fp16, bf16, tf32,
// e4m3 and e5m2, and round-to-nearest-even encoding (fp8 saturates to the largest finite value,
// as cvt.satfinite does; fp16/bf16 overflow to infinity).
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

// The element of type `t` at `p` as a float (tf32 reads the fp32 container and drops the low
// 13 mantissa bits). `t` must be one of f16, bf16, f32, tf32, e4m3, e5m2.
float load_as_float(DataType t, const std::byte* p);
// Stores `f` as type `t` at `p` (f16, bf16, f32, e4m3, e5m2).
void store_from_float(DataType t, float f, std::byte* p);

}  // namespace bwsim
