// The GEMM kernels' host check (kernels/GemmReference, check_gemm): D against the fp64 reference
// within K 2^-24 sum|ab|. The bound's magnitude sum is formed only where the error exceeds
// K 2^-24 |ref|, so these cover an error that only the magnitude admits (products that cancel),
// one just past the bound, and which of several bad elements is reported when the host's threads
// share the columns.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernels/GemmReference.hpp"

namespace bwsim {
namespace {

struct Operands {
  GemmProblem p;
  std::vector<std::byte> a, b;  // bf16, rows of K
  std::vector<float> d;         // fp32, rows of N
  double ref(std::uint32_t m, std::uint32_t n) const {
    double s = 0;
    for (std::uint32_t k = 0; k < p.k; ++k)
      s += static_cast<double>(load_as_float(DataType::BF16, &a[(m * p.k + k) * 2])) *
           load_as_float(DataType::BF16, &b[(n * p.k + k) * 2]);
    return s;
  }
  double magnitude(std::uint32_t m, std::uint32_t n) const {
    double s = 0;
    for (std::uint32_t k = 0; k < p.k; ++k)
      s += std::fabs(static_cast<double>(load_as_float(DataType::BF16, &a[(m * p.k + k) * 2])) *
                     load_as_float(DataType::BF16, &b[(n * p.k + k) * 2]));
    return s;
  }
  GemmCheck check() const {
    return check_gemm(p, a, p.k * 2, b, p.k * 2, std::as_bytes(std::span(d)), p.n * 4);
  }
};

// Random bf16 A and B, D the reference rounded to fp32 (within the bound everywhere).
Operands random_operands(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  Operands o{.p = {.m = m, .n = n, .k = k}};
  o.a.resize(std::size_t{m} * k * 2);
  o.b.resize(std::size_t{n} * k * 2);
  fill_random(o.a, DataType::BF16, m, k, k * 2, 1);
  fill_random(o.b, DataType::BF16, n, k, k * 2, 2);
  o.d.resize(std::size_t{m} * n);
  for (std::uint32_t i = 0; i < m; ++i)
    for (std::uint32_t j = 0; j < n; ++j) o.d[i * n + j] = static_cast<float>(o.ref(i, j));
  return o;
}

void set_bf16(std::vector<std::byte>& v, std::size_t element, float x) { store_from_float(DataType::BF16, x, &v[element * 2]); }

TEST(GemmReferenceTest, AnErrorOnlyTheMagnitudeSumAdmitsPassesAndOnePastItFails) {
  Operands o = random_operands(6, 13, 40);  // ragged: row and column tails of the reference's blocks
  // Row 5 of A against row 9 of B: products +1.5 and -1.5 in pairs, so the sum is 0 while
  // sum|ab| = 40 x 1.5 = 60 and the bound is 40 x 2^-24 x 60.
  for (std::uint32_t k = 0; k < 40; ++k) {
    set_bf16(o.a, 5 * 40 + k, 1.5f);
    set_bf16(o.b, 9 * 40 + k, k % 2 ? -1.0f : 1.0f);
  }
  for (std::uint32_t i = 0; i < 6; ++i)
    for (std::uint32_t j = 0; j < 13; ++j) o.d[i * 13 + j] = static_cast<float>(o.ref(i, j));
  ASSERT_EQ(o.ref(5, 9), 0.0);
  ASSERT_EQ(o.magnitude(5, 9), 60.0);
  const double bound = 40 * std::ldexp(1.0, -24) * 60.0;
  o.d[5 * 13 + 9] = static_cast<float>(0.9 * bound);
  const GemmCheck within = o.check();
  EXPECT_TRUE(within.matches) << within.detail;
  EXPECT_FLOAT_EQ(within.max_error, static_cast<float>(0.9 * bound));
  o.d[5 * 13 + 9] = static_cast<float>(1.1 * bound);
  const GemmCheck past = o.check();
  EXPECT_FALSE(past.matches);
  EXPECT_NE(past.detail.find("D[5][9]"), std::string::npos) << past.detail;
  EXPECT_NE(past.detail.find(fmt::format("bound {:.3g}", bound + 1e-30)), std::string::npos) << past.detail;
}

TEST(GemmReferenceTest, TheFirstBadElementInRowMajorOrderIsReportedWhateverThreadFoundIt) {
  // 2^26 multiply-adds: large enough for the host's threads to share B's blocks of 8 columns.
  Operands o = random_operands(512, 512, 256);
  EXPECT_TRUE(o.check().matches);
  o.d[20 * 512 + 3] += 1.0f;    // block 0
  o.d[10 * 512 + 505] += 1.0f;  // block 63 (another thread than block 0): earlier in row-major order
  o.d[10 * 512 + 506] += 1.0f;
  const GemmCheck c = o.check();
  EXPECT_FALSE(c.matches);
  EXPECT_EQ(c.detail.rfind("D[10][505] = ", 0), 0u) << c.detail;
  EXPECT_NEAR(c.max_error, 1.0, 1e-3);
}

}  // namespace
}  // namespace bwsim
