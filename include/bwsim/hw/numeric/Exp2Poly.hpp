#pragma once
// Software 2^x on the FMA and ALU pipes: FlashAttention-4's exp2 emulation, bit for bit what the
// softmax twin (tools/calibration/softmax_row.cuh, exp2_poly) computes on the GPU with fp32 FMAs.
//
// Cody-Waite reduction 2^x = 2^j 2^f with j = floor(x), f = x - j in [0, 1): clamp x to -127
// (FMNMX), j by a round-down add of 1.5 x 2^23 (FADD.RM), j as a float and f (2 FADD), 2^f by a
// degree-3 polynomial in Horner form (3 FFMA), and j added to the exponent field as an integer
// (one LEA). The coefficients are the minimax fit of the relative error with 2^0 exact.
#include <cstdint>

namespace bwsim {

// Coefficients of 1 + f (c1 + f (c2 + f c3)) (softmax_row.cuh: 0x3f31f32c, 0x3e691bc5, 0x3d9dd553).
inline constexpr float kExp2PolyC1 = 0.695116758f;
inline constexpr float kExp2PolyC2 = 0.227644995f;
inline constexpr float kExp2PolyC3 = 0.0770670399f;

// The largest relative error of exp2_poly against the exact 2^x for x in [-126, 0], the range
// softmax uses it on (x = s scale - max scale <= 0; below -126 P is under 2^-126, nothing in a
// row sum of at least 1): 8.57e-5 (the Remez fit's 8.56e-5 plus the fp32 evaluation), which
// Exp2PolyTest.MaxRelativeErrorOverTheSoftmaxRange measures.
inline constexpr double kExp2PolyMaxRelativeError = 8.6e-5;

// 2^x as the emulation computes it, with each step's fp32 rounding (round-down for the floor).
float exp2_poly(float x);

}  // namespace bwsim
