#include "bwsim/kernels/GemmReference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "bwsim/hw/numeric/NumberFormats.hpp"

namespace bwsim {

void fill_random(std::span<std::byte> bytes, DataType t, std::uint32_t rows, std::uint32_t cols, std::uint32_t pitch,
                 std::uint32_t seed, bool packed) {
  std::uint32_t x = seed;
  const std::uint32_t e = size_of(t);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t c = 0; c < cols; ++c) {
      x = x * 1664525u + 1013904223u;
      std::byte* at = &bytes[static_cast<std::size_t>(r) * pitch + (packed ? c / 2 : c * e)];
      if (packed) {  // an FP4 code per nibble
        const auto code = static_cast<std::uint8_t>(x >> 28);
        *at = c % 2 ? (*at & std::byte{0x0F}) | static_cast<std::byte>(code << 4) : static_cast<std::byte>(code);
      } else if (t == DataType::S8 || t == DataType::U8 || t == DataType::E2M1) {
        *at = static_cast<std::byte>(t == DataType::E2M1 ? x >> 28 : x >> 24);
      } else {
        const float v = (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * 4.0f;  // uniform in [-2, 2)
        store_from_float(t == DataType::TF32 ? DataType::F32 : t, v, at);
      }
    }
}

std::uint32_t scale_atoms_k(std::uint32_t k, std::uint32_t block) { return ((k + block - 1) / block + 3) / 4; }

std::uint64_t scale_offset(std::uint32_t row, std::uint32_t j, std::uint32_t atoms_k) {
  return (static_cast<std::uint64_t>(row / 128) * atoms_k + j / 4) * 512 + 16 * (row % 32) + 4 * (row % 128 / 32) + j % 4;
}

void fill_random_scales(std::span<std::byte> bytes, DataType t, std::uint32_t seed) {
  std::uint32_t x = seed;
  for (std::byte& b : bytes) {
    x = x * 1664525u + 1013904223u;
    const std::uint32_t r = x >> 24;
    b = static_cast<std::byte>(t == DataType::UE8M0 ? 124 + r % 7 : 0x30 + r % 16);
  }
}

namespace {

constexpr std::uint32_t kCols = 8;  // columns of D the reference sums at once

// ref[j] += a[k] b[k][j] and mag[j] += |a[k] b[k][j]| over k, for a block of kCols columns of B
// (k-major, in fp64). Two accumulators per column (even and odd k) halve the chain of dependent
// additions; the clones use the host's widest vectors (a multiply-add may be contracted there:
// the reference's own rounding, ~2^-53 of the sums, is far below the fp32 bound it checks).
[[gnu::target_clones("avx512f", "avx2", "default")]]
void sum_block(const float* a, const double* b, std::uint32_t k_len, double* ref, double* mag) {
  double r[2][kCols] = {}, g[2][kCols] = {};
  std::uint32_t k = 0;
  for (; k + 1 < k_len; k += 2)
    for (std::uint32_t h = 0; h < 2; ++h) {
      const double av = a[k + h];
      for (std::uint32_t j = 0; j < kCols; ++j) {
        const double prod = av * b[static_cast<std::size_t>(k + h) * kCols + j];
        r[h][j] += prod;
        g[h][j] += std::fabs(prod);
      }
    }
  for (; k < k_len; ++k)
    for (std::uint32_t j = 0; j < kCols; ++j) {
      const double prod = a[k] * b[static_cast<std::size_t>(k) * kCols + j];
      r[0][j] += prod;
      g[0][j] += std::fabs(prod);
    }
  for (std::uint32_t j = 0; j < kCols; ++j) {
    ref[j] = r[0][j] + r[1][j];
    mag[j] = g[0][j] + g[1][j];
  }
}

}  // namespace

GemmCheck check_gemm(const GemmProblem& p, std::span<const std::byte> a, std::uint32_t a_pitch,
                     std::span<const std::byte> b, std::uint32_t b_pitch, std::span<const std::byte> d,
                     std::uint32_t d_pitch) {
  GemmCheck out;
  const std::uint32_t ea = size_of(p.ab_type), ed = size_of(p.d_type);
  const GemmScales& sc = p.scales;
  const std::uint32_t atoms_k = sc.block ? scale_atoms_k(p.k, sc.block) : 0;
  // Element k of a row of A or B, times its block scale.
  auto element = [&](std::span<const std::byte> rows, std::uint32_t pitch, std::span<const std::byte> scales,
                     std::uint32_t r, std::uint32_t k) {
    const std::byte* row = &rows[static_cast<std::size_t>(r) * pitch];
    const float v = p.packed ? e2m1_to_float(static_cast<std::uint8_t>(row[k / 2]) >> (4 * (k % 2)))
                             : load_as_float(p.ab_type, row + k * ea);
    return sc.block ? v * load_as_float(sc.type, &scales[scale_offset(r, k / sc.block, atoms_k)]) : v;
  };
  // B packed by blocks of kCols rows (zeros past N), k-major inside a block: the reference sums
  // kCols columns of D at once, two sums each (the product and its magnitude), so the k loop
  // vectorizes and its additions are independent chains. In another order than one chain, the
  // fp64 sums differ by ~K 2^-53 sum|ab|, far below the fp32 bound they are checked against.
  const std::uint32_t blocks = (p.n + kCols - 1) / kCols;
  std::vector<double> bpack(static_cast<std::size_t>(blocks) * p.k * kCols, 0.0);
  for (std::uint32_t n = 0; n < p.n; ++n)
    for (std::uint32_t k = 0; k < p.k; ++k)
      bpack[(static_cast<std::size_t>(n / kCols) * p.k + k) * kCols + n % kCols] =
          element(b, b_pitch, sc.b, n, k);
  std::vector<float> arow(p.k);
  const bool integer = p.d_type == DataType::S32;
  const double u = std::ldexp(1.0, -24);
  for (std::uint32_t m = 0; m < p.m; ++m) {
    for (std::uint32_t k = 0; k < p.k; ++k) arow[k] = element(a, a_pitch, sc.a, m, k);
    for (std::uint32_t blk = 0; blk < blocks; ++blk) {
      const double* bk = &bpack[static_cast<std::size_t>(blk) * p.k * kCols];
      double ref[kCols], mag[kCols];
      sum_block(arow.data(), bk, p.k, ref, mag);
      for (std::uint32_t j = 0; j < kCols && blk * kCols + j < p.n; ++j) {
        const std::uint32_t n = blk * kCols + j;
        const std::byte* at = &d[static_cast<std::size_t>(m) * d_pitch + n * ed];
        std::int32_t s32 = 0;
        if (integer) std::memcpy(&s32, at, 4);
        const double got = integer ? s32 : load_as_float(p.d_type, at);
        const double bound =
            integer ? 0.0
                    : p.k * u * mag[j] + (p.d_type == DataType::BF16 ? std::ldexp(std::fabs(ref[j]), -8) : 0.0) + 1e-30;
        const double err = std::fabs(got - ref[j]);
        out.max_error = std::max(out.max_error, err);
        out.max_bound = std::max(out.max_bound, bound);
        if (!(err <= bound) && out.matches) {
          out.matches = false;
          out.detail = fmt::format("D[{}][{}] = {} but the reference is {} (error {:.3g} exceeds the bound {:.3g})", m,
                                   n, got, ref[j], err, bound);
        }
      }
    }
  }
  if (out.matches)
    out.detail = integer ? std::string("D equals the integer reference")
                         : fmt::format("D matches the fp64 reference within K*2^-24*sum|ab|{} (max error {:.3g})",
                                       p.d_type == DataType::BF16 ? " + bf16 rounding" : "", out.max_error);
  return out;
}

}  // namespace bwsim
