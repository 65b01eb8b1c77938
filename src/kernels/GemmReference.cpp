#include "bwsim/kernels/GemmReference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "bwsim/hw/numeric/NumberFormats.hpp"

namespace bwsim {

void fill_random(std::span<std::byte> bytes, DataType t, std::uint32_t rows, std::uint32_t cols, std::uint32_t pitch,
                 std::uint32_t seed) {
  std::uint32_t x = seed;
  const std::uint32_t e = size_of(t);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t c = 0; c < cols; ++c) {
      x = x * 1664525u + 1013904223u;
      const float v = (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * 4.0f;  // uniform in [-2, 2)
      store_from_float(t, v, &bytes[static_cast<std::size_t>(r) * pitch + c * e]);
    }
}

GemmCheck check_gemm(const GemmProblem& p, std::span<const std::byte> a, std::uint32_t a_pitch,
                     std::span<const std::byte> b, std::uint32_t b_pitch, std::span<const std::byte> d,
                     std::uint32_t d_pitch) {
  GemmCheck out;
  const std::uint32_t ea = size_of(p.ab_type), ed = size_of(p.d_type);
  std::vector<float> bf(static_cast<std::size_t>(p.n) * p.k);
  for (std::uint32_t n = 0; n < p.n; ++n)
    for (std::uint32_t k = 0; k < p.k; ++k)
      bf[static_cast<std::size_t>(n) * p.k + k] = load_as_float(p.ab_type, &b[static_cast<std::size_t>(n) * b_pitch + k * ea]);
  std::vector<float> arow(p.k);
  const double u = std::ldexp(1.0, -24);
  for (std::uint32_t m = 0; m < p.m; ++m) {
    for (std::uint32_t k = 0; k < p.k; ++k) arow[k] = load_as_float(p.ab_type, &a[static_cast<std::size_t>(m) * a_pitch + k * ea]);
    for (std::uint32_t n = 0; n < p.n; ++n) {
      const float* br = &bf[static_cast<std::size_t>(n) * p.k];
      double ref = 0, mag = 0;
      for (std::uint32_t k = 0; k < p.k; ++k) {
        const double prod = static_cast<double>(arow[k]) * br[k];
        ref += prod;
        mag += std::fabs(prod);
      }
      const double got = load_as_float(p.d_type, &d[static_cast<std::size_t>(m) * d_pitch + n * ed]);
      const double bound = p.k * u * mag + (p.d_type == DataType::BF16 ? std::ldexp(std::fabs(ref), -8) : 0.0) + 1e-30;
      const double err = std::fabs(got - ref);
      out.max_error = std::max(out.max_error, err);
      out.max_bound = std::max(out.max_bound, bound);
      if (!(err <= bound) && out.matches) {
        out.matches = false;
        out.detail = fmt::format("D[{}][{}] = {} but the reference is {} (error {:.3g} exceeds the bound {:.3g})", m, n,
                                 got, ref, err, bound);
      }
    }
  }
  if (out.matches)
    out.detail = fmt::format("D matches the fp64 reference within K*2^-24*sum|ab|{} (max error {:.3g})",
                             p.d_type == DataType::BF16 ? " + bf16 rounding" : "", out.max_error);
  return out;
}

}  // namespace bwsim
