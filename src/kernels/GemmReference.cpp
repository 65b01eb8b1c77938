#include "bwsim/kernels/GemmReference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bwsim/core/HostCores.hpp"
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
constexpr std::uint32_t kRows = 4;  // rows of D the reference sums at once

// ref[i][j] = sum over k of a_i[k] b[k][j] for kRows rows of A and a block of kCols columns of B,
// in fp64 vectors of 4. The operands come packed as the loop reads them, as doubles, k-major: per
// k, `a` holds the kRows rows' values (broadcast straight from memory), `b` the block's kCols
// values, so each step is 2 vector loads, 4 broadcasts and 8 independent multiply-add chains: each
// B vector loaded serves kRows rows. The clones use the host's vector width and fused multiply-add
// (the reference's own rounding, ~K 2^-53 of sum|ab|, is far below the fp32 bound it checks).
using Double4 = double __attribute__((vector_size(32)));
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
void sum_block(const double* a, std::uint32_t k_len, const double* b, double (*ref)[kCols]) {
  static_assert(kCols == 8, "two vectors of 4 per row");
  Double4 r[kRows][2] = {};
  for (std::uint32_t k = 0; k < k_len; ++k, a += kRows, b += kCols) {
    Double4 v0, v1;
    std::memcpy(&v0, b, sizeof v0);
    std::memcpy(&v1, b + 4, sizeof v1);
    for (std::uint32_t i = 0; i < kRows; ++i) {
      r[i][0] += a[i] * v0;
      r[i][1] += a[i] * v1;
    }
  }
  for (std::uint32_t i = 0; i < kRows; ++i)
    for (std::uint32_t h = 0; h < 2; ++h) std::memcpy(&ref[i][4 * h], &r[i][h], sizeof r[i][h]);
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
  // B packed by blocks of kCols rows (zeros past N) and A by groups of kRows rows (zeros past M),
  // k-major inside each, as sum_block reads them: it sums a kRows x kCols block of D at once, so
  // the k loop vectorizes and each B value loaded serves kRows rows. A block of B serves every
  // group of A in turn while it is in the host's cache. Each sum runs in k order; fused
  // multiply-adds change it by ~K 2^-53 sum|ab|, far below the fp32 bound it is checked against.
  const std::uint32_t blocks = (p.n + kCols - 1) / kCols, groups = (p.m + kRows - 1) / kRows;
  std::vector<double> bpack(static_cast<std::size_t>(blocks) * p.k * kCols, 0.0);
  for (std::uint32_t n = 0; n < p.n; ++n)
    for (std::uint32_t k = 0; k < p.k; ++k)
      bpack[(static_cast<std::size_t>(n / kCols) * p.k + k) * kCols + n % kCols] = element(b, b_pitch, sc.b, n, k);
  std::vector<double> apack(static_cast<std::size_t>(groups) * p.k * kRows, 0.0);
  for (std::uint32_t m = 0; m < p.m; ++m)
    for (std::uint32_t k = 0; k < p.k; ++k)
      apack[(static_cast<std::size_t>(m / kRows) * p.k + k) * kRows + m % kRows] = element(a, a_pitch, sc.a, m, k);
  // sum_k |a_k b_k| of element (m, n), in k order.
  auto magnitude = [&](std::uint32_t m, std::uint32_t n) {
    const double* ak = &apack[static_cast<std::size_t>(m / kRows) * p.k * kRows + m % kRows];
    const double* bk = &bpack[static_cast<std::size_t>(n / kCols) * p.k * kCols + n % kCols];
    double sum = 0.0;
    for (std::size_t k = 0; k < p.k; ++k) sum += std::fabs(ak[k * kRows] * bk[k * kCols]);
    return sum;
  };
  const bool integer = p.d_type == DataType::S32;
  const double u = std::ldexp(1.0, -24);
  // The first element of D (in row-major order) outside its bound is the one reported. The bound
  // K u sum|ab| (+ D's rounding) needs the magnitude sum only where the error exceeds K u |ref|
  // (+ the same): |ref| <= sum|ab|, so an error within that (shrunk by 2^-40 for the two sums' own
  // rounding) is within the bound. With random operands that is all but the elements whose
  // products nearly cancel, so the magnitudes cost a dot product for those few instead of a
  // second full product. Each thread checks a share of B's blocks and keeps its own findings,
  // merged in a fixed order (the result does not depend on the number of threads).
  struct Findings {
    double max_error = 0;
    std::uint64_t first_bad = ~0ull;
    std::string detail;
  };
  auto check = [&](Findings& f, std::uint32_t m, std::uint32_t n, double ref) {
    const std::byte* at = &d[static_cast<std::size_t>(m) * d_pitch + n * ed];
    std::int32_t s32 = 0;
    if (integer) std::memcpy(&s32, at, 4);
    const double got = integer ? s32 : load_as_float(p.d_type, at);
    const double err = std::fabs(got - ref);
    f.max_error = std::max(f.max_error, err);
    const double rounding = (p.d_type == DataType::BF16 ? std::ldexp(std::fabs(ref), -8) : 0.0) + 1e-30;
    if (integer ? err == 0.0 : err <= p.k * u * std::fabs(ref) * (1.0 - 0x1p-40) + rounding) return;
    const double bound = integer ? 0.0 : p.k * u * magnitude(m, n) + rounding;
    const std::uint64_t at_index = static_cast<std::uint64_t>(m) * p.n + n;
    if (!(err <= bound) && at_index < f.first_bad) {
      f.first_bad = at_index;
      f.detail = fmt::format("D[{}][{}] = {} but the reference is {} (error {:.3g} exceeds the bound {:.3g})", m, n,
                             got, ref, err, bound);
    }
  };
  auto check_blocks = [&](Findings& f, std::uint32_t first, std::uint32_t stride) {
    for (std::uint32_t blk = first; blk < blocks; blk += stride)
      for (std::uint32_t g = 0; g < groups; ++g) {
        double ref[kRows][kCols];
        sum_block(&apack[static_cast<std::size_t>(g) * p.k * kRows], p.k,
                  &bpack[static_cast<std::size_t>(blk) * p.k * kCols], ref);
        for (std::uint32_t i = 0; i < kRows && g * kRows + i < p.m; ++i)
          for (std::uint32_t j = 0; j < kCols && blk * kCols + j < p.n; ++j)
            check(f, g * kRows + i, blk * kCols + j, ref[i][j]);
      }
  };
  // The process's cores share the sums of a large problem (1024^3 is 2^30 multiply-adds); a small
  // one is not worth a thread's start.
  const double work = static_cast<double>(p.m) * p.n * p.k;
  const std::uint32_t threads = work < 0x1p26 ? 1u : std::clamp(usable_cores(), 1u, std::min(8u, blocks));
  std::vector<Findings> found(threads);
  std::uint64_t first_bad = ~0ull;
  {
    std::vector<std::jthread> helpers;
    for (std::uint32_t t = 1; t < threads; ++t) helpers.emplace_back([&, t] { check_blocks(found[t], t, threads); });
    check_blocks(found[0], 0, threads);
  }
  for (const Findings& f : found) {
    out.max_error = std::max(out.max_error, f.max_error);
    if (f.first_bad < first_bad) {
      first_bad = f.first_bad;
      out.matches = false;
      out.detail = f.detail;
    }
  }
  if (out.matches)
    out.detail = integer ? std::string("D equals the integer reference")
                         : fmt::format("D matches the fp64 reference within K*2^-24*sum|ab|{} (max error {:.3g})",
                                       p.d_type == DataType::BF16 ? " + bf16 rounding" : "", out.max_error);
  return out;
}

}  // namespace bwsim
