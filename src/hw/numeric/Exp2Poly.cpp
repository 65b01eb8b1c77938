#include "bwsim/hw/numeric/Exp2Poly.hpp"

#include <bit>
#include <cmath>

namespace bwsim {

float exp2_poly(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 x 2^23: its ulp is 1, so kMagic + x rounded down is kMagic + floor(x)
  x = std::fmax(x, -127.0f);
  const float r = kMagic + std::floor(x);  // FADD.RM: exact, |floor(x)| < 2^22
  const float j = r - kMagic;
  const float f = x - j;
  const float q = std::fma(std::fma(std::fma(kExp2PolyC3, f, kExp2PolyC2), f, kExp2PolyC1), f, 1.0f);
  // The bits of r are (150 << 23) | (2^22 + j): shifted left by 23 they leave j << 23 (mod 2^32).
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(q) + (std::bit_cast<std::uint32_t>(r) << 23));
}

}  // namespace bwsim
