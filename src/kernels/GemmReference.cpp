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
constexpr std::uint32_t kRows = 2;  // rows of D the reference sums at once

// ref[i][j] += a_i[k] b[k][j] and mag[i][j] += |a_i[k]| |b[k][j]| over k, for kRows rows of A
// (`a`, rows a_stride apart) and a block of kCols columns of B (`b`, k-major), in fp64 vectors of 4:
// each B vector loaded serves kRows rows, and the 2 x kRows x 2 vector sums are independent chains
// (with the B values, their magnitudes and the A operands, 15 registers: within AVX2's 16). The
// clones use the host's vector width and fused multiply-add (the reference's own rounding, ~2^-53
// of the sums, is far below the fp32 bound it checks).
using Double4 = double __attribute__((vector_size(32)));
using Bits4 = std::uint64_t __attribute__((vector_size(32)));
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
void sum_block(const float* a, std::size_t a_stride, std::uint32_t k_len, const double* b, double (*ref)[kCols],
               double (*mag)[kCols]) {
  static_assert(kCols == 8, "two vectors of 4 per row");
  constexpr Bits4 kNoSign = {~0ull >> 1, ~0ull >> 1, ~0ull >> 1, ~0ull >> 1};
  Double4 r[kRows][2] = {}, g[kRows][2] = {};
  for (std::uint32_t k = 0; k < k_len; ++k) {
    Double4 v0, v1;
    std::memcpy(&v0, b + static_cast<std::size_t>(k) * kCols, sizeof v0);
    std::memcpy(&v1, b + static_cast<std::size_t>(k) * kCols + 4, sizeof v1);
    const Double4 m0 = (Double4)((Bits4)v0 & kNoSign), m1 = (Double4)((Bits4)v1 & kNoSign);
    for (std::uint32_t i = 0; i < kRows; ++i) {
      const double av = a[i * a_stride + k], mv = std::fabs(av);
      r[i][0] += av * v0;
      r[i][1] += av * v1;
      g[i][0] += mv * m0;
      g[i][1] += mv * m1;
    }
  }
  for (std::uint32_t i = 0; i < kRows; ++i)
    for (std::uint32_t j = 0; j < 4; ++j) {
      ref[i][j] = r[i][0][j];
      ref[i][4 + j] = r[i][1][j];
      mag[i][j] = g[i][0][j];
      mag[i][4 + j] = g[i][1][j];
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
  // B packed by blocks of kCols rows (zeros past N), k-major inside a block, and A as floats (zeros
  // past M, to a whole number of kRows rows): the reference sums a kRows x kCols block of D at once,
  // two sums each (the product and its magnitude), so the k loop vectorizes and each B value loaded
  // serves kRows rows. A block of B serves every row of A in turn while it is in the host's cache.
  // Each sum runs in k order; fused multiply-adds change it by ~K 2^-53 sum|ab|, far below the fp32
  // bound it is checked against.
  const std::uint32_t blocks = (p.n + kCols - 1) / kCols, rows = (p.m + kRows - 1) / kRows * kRows;
  std::vector<double> bpack(static_cast<std::size_t>(blocks) * p.k * kCols, 0.0);
  for (std::uint32_t n = 0; n < p.n; ++n)
    for (std::uint32_t k = 0; k < p.k; ++k)
      bpack[(static_cast<std::size_t>(n / kCols) * p.k + k) * kCols + n % kCols] = element(b, b_pitch, sc.b, n, k);
  std::vector<float> afloat(static_cast<std::size_t>(rows) * p.k, 0.0f);
  for (std::uint32_t m = 0; m < p.m; ++m)
    for (std::uint32_t k = 0; k < p.k; ++k) afloat[static_cast<std::size_t>(m) * p.k + k] = element(a, a_pitch, sc.a, m, k);
  const bool integer = p.d_type == DataType::S32;
  const double u = std::ldexp(1.0, -24);
  // The first element of D (in row-major order) outside its bound is the one reported.
  std::uint64_t first_bad = ~0ull;
  auto check = [&](std::uint32_t m, std::uint32_t n, double ref, double mag) {
    const std::byte* at = &d[static_cast<std::size_t>(m) * d_pitch + n * ed];
    std::int32_t s32 = 0;
    if (integer) std::memcpy(&s32, at, 4);
    const double got = integer ? s32 : load_as_float(p.d_type, at);
    const double bound =
        integer ? 0.0 : p.k * u * mag + (p.d_type == DataType::BF16 ? std::ldexp(std::fabs(ref), -8) : 0.0) + 1e-30;
    const double err = std::fabs(got - ref);
    out.max_error = std::max(out.max_error, err);
    out.max_bound = std::max(out.max_bound, bound);
    const std::uint64_t at_index = static_cast<std::uint64_t>(m) * p.n + n;
    if (!(err <= bound) && at_index < first_bad) {
      first_bad = at_index;
      out.matches = false;
      out.detail = fmt::format("D[{}][{}] = {} but the reference is {} (error {:.3g} exceeds the bound {:.3g})", m, n,
                               got, ref, err, bound);
    }
  };
  for (std::uint32_t blk = 0; blk < blocks; ++blk)
    for (std::uint32_t m0 = 0; m0 < p.m; m0 += kRows) {
      double ref[kRows][kCols], mag[kRows][kCols];
      sum_block(&afloat[static_cast<std::size_t>(m0) * p.k], p.k, p.k,
                &bpack[static_cast<std::size_t>(blk) * p.k * kCols], ref, mag);
      for (std::uint32_t i = 0; i < kRows && m0 + i < p.m; ++i)
        for (std::uint32_t j = 0; j < kCols && blk * kCols + j < p.n; ++j) check(m0 + i, blk * kCols + j, ref[i][j], mag[i][j]);
    }
  if (out.matches)
    out.detail = integer ? std::string("D equals the integer reference")
                         : fmt::format("D matches the fp64 reference within K*2^-24*sum|ab|{} (max error {:.3g})",
                                       p.d_type == DataType::BF16 ? " + bf16 rounding" : "", out.max_error);
  return out;
}

}  // namespace bwsim
