// The software exp2 (hw/numeric/Exp2Poly) that FlashAttention-4's softmax runs on the FMA pipe:
// its relative error over the range softmax uses it on, exact powers of two, and 2^-inf = 0.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "bwsim/hw/numeric/Exp2Poly.hpp"

namespace bwsim {
namespace {

double relative_error(float x) {
  const double exact = std::exp2(static_cast<double>(x));
  return std::fabs(exp2_poly(x) - exact) / exact;
}

TEST(Exp2PolyTest, MaxRelativeErrorOverTheSoftmaxRange) {
  // Every float of [-2, -1) (its 2^23 values are the fraction f = x + 2 over all of [0, 1) at
  // the fraction's own spacing), then every 2^-10 step of [-126, 0] (each exponent).
  double worst = 0;
  for (std::uint32_t bits = std::bit_cast<std::uint32_t>(-1.0f); bits < std::bit_cast<std::uint32_t>(-2.0f); ++bits)
    worst = std::max(worst, relative_error(std::bit_cast<float>(bits)));
  for (float x = -126.0f; x <= 0.0f; x += 0x1p-10f) worst = std::max(worst, relative_error(x));
  EXPECT_LE(worst, kExp2PolyMaxRelativeError);
  EXPECT_GE(worst, 8.5e-5);  // the bound is tight: the fit's own error, not slack
}

TEST(Exp2PolyTest, IntegersAreExactAndMinusInfinityIsZero) {
  for (int j = -126; j <= 0; ++j) EXPECT_EQ(exp2_poly(static_cast<float>(j)), std::ldexp(1.0f, j)) << j;
  EXPECT_EQ(exp2_poly(-std::numeric_limits<float>::infinity()), 0.0f);  // masked scores
  EXPECT_EQ(exp2_poly(-127.0f), 0.0f);                                     // the clamp's floor
}

}  // namespace
}  // namespace bwsim
