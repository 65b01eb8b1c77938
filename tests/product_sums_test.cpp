// The tensor cores' in-instruction sums (hw/numeric/ProductSums): blocked and vectorized, every
// sum must still be the plain k-ordered fp32 sum of fp32-rounded products, bit for bit, over the
// register blocks and every tail of rows and columns.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "bwsim/hw/numeric/ProductSums.hpp"

namespace bwsim {
namespace {

// The definition, one sum at a time: the product rounded to fp32, then added.
float reference_sum(const std::vector<float>& a, const std::vector<float>& bt, std::uint32_t n_len, std::uint32_t k_len,
                    std::uint32_t m, std::uint32_t n) {
  float s = 0.0f;
  for (std::uint32_t k = 0; k < k_len; ++k) {
    const volatile float p = a[m * k_len + k] * bt[k * n_len + n];
    s = s + p;
  }
  return s;
}

TEST(ProductSumsTest, EverySumIsTheKOrderedSumOfRoundedProductsBitForBit) {
  // Values of mixed magnitudes and signs, so products round and the order of additions shows.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  auto value = [&] { return std::ldexp(mantissa(rng), exponent(rng)); };
  std::uint32_t order_sensitive = 0;
  for (const std::uint32_t m_len : {1u, 3u, 4u, 7u, 16u})
    for (const std::uint32_t n_len : {1u, 8u, 15u, 16u, 24u, 40u, 256u})
      for (const std::uint32_t k_len : {1u, 2u, 16u, 33u}) {
        std::vector<float> a(m_len * k_len), bt(k_len * n_len), sums(m_len * n_len, -1.0f);
        for (float& x : a) x = value();
        for (float& x : bt) x = value();
        product_sums(a.data(), m_len, bt.data(), n_len, k_len, sums.data());
        for (std::uint32_t m = 0; m < m_len; ++m)
          for (std::uint32_t n = 0; n < n_len; ++n) {
            const float want = reference_sum(a, bt, n_len, k_len, m, n);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(sums[m * n_len + n]), std::bit_cast<std::uint32_t>(want))
                << "m_len " << m_len << " n_len " << n_len << " k_len " << k_len << " at (" << m << ", " << n << ")";
            // The same products summed in reverse order: counts the sums whose bits depend on the order.
            float reversed = 0.0f;
            for (std::uint32_t k = k_len; k-- > 0;) {
              const volatile float p = a[m * k_len + k] * bt[k * n_len + n];
              reversed = reversed + p;
            }
            order_sensitive += reversed != want;
          }
      }
  EXPECT_GT(order_sensitive, 1000u);  // the inputs do tell orders apart
}

}  // namespace
}  // namespace bwsim
