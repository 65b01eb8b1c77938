#include "bwsim/hw/numeric/ProductSums.hpp"

namespace bwsim {
namespace {

using Float8 = float __attribute__((vector_size(32)));
constexpr std::uint32_t kRowBlock = 4;   // rows of A whose sums stay in registers together
constexpr std::uint32_t kLanes = 8;      // floats per vector

// By reference and inline in each clone: no vector crosses a call, whose ABI the clones differ in.
[[gnu::always_inline]] inline void load8(Float8& v, const float* p) { __builtin_memcpy(&v, p, sizeof v); }
[[gnu::always_inline]] inline void store8(float* p, const Float8& v) { __builtin_memcpy(p, &v, sizeof v); }

}  // namespace

// A block of kRowBlock rows x 2 vectors of columns keeps its 8 sums in registers over the whole k
// loop: each B vector loaded serves four rows and no sum goes through memory between products
// (a sum per column across k, vectorized over n, so every sum keeps its own k order). Rows and
// columns past the blocks go one row / one column at a time in the same order. Clones for AVX2
// and the baseline; neither has FMA, so no multiply-add is contracted into one rounding.
[[gnu::target_clones("avx2", "default")]]
void product_sums(const float* a, std::uint32_t m_len, const float* bt, std::uint32_t n_len, std::uint32_t k_len,
                  float* sums) {
  const std::uint32_t n_vec = n_len / kLanes * kLanes;
  std::uint32_t m = 0;
  for (; m + kRowBlock <= m_len; m += kRowBlock) {
    const float* a0 = a + static_cast<std::size_t>(m) * k_len;
    std::uint32_t n = 0;
    for (; n + 2 * kLanes <= n_vec; n += 2 * kLanes) {
      Float8 s[kRowBlock][2] = {};
      for (std::uint32_t k = 0; k < k_len; ++k) {
        const float* br = bt + static_cast<std::size_t>(k) * n_len + n;
        Float8 b0, b1;
        load8(b0, br);
        load8(b1, br + kLanes);
        for (std::uint32_t r = 0; r < kRowBlock; ++r) {
          const float av = a0[r * k_len + k];
          s[r][0] += av * b0;
          s[r][1] += av * b1;
        }
      }
      for (std::uint32_t r = 0; r < kRowBlock; ++r) {
        store8(sums + static_cast<std::size_t>(m + r) * n_len + n, s[r][0]);
        store8(sums + static_cast<std::size_t>(m + r) * n_len + n + kLanes, s[r][1]);
      }
    }
    for (; n < n_vec; n += kLanes) {
      Float8 s[kRowBlock] = {};
      for (std::uint32_t k = 0; k < k_len; ++k) {
        Float8 b0;
        load8(b0, bt + static_cast<std::size_t>(k) * n_len + n);
        for (std::uint32_t r = 0; r < kRowBlock; ++r) s[r] += a0[r * k_len + k] * b0;
      }
      for (std::uint32_t r = 0; r < kRowBlock; ++r) store8(sums + static_cast<std::size_t>(m + r) * n_len + n, s[r]);
    }
    for (; n < n_len; ++n)
      for (std::uint32_t r = 0; r < kRowBlock; ++r) {
        float s = 0.0f;
        for (std::uint32_t k = 0; k < k_len; ++k) s += a0[r * k_len + k] * bt[static_cast<std::size_t>(k) * n_len + n];
        sums[static_cast<std::size_t>(m + r) * n_len + n] = s;
      }
  }
  for (; m < m_len; ++m) {
    float* out = sums + static_cast<std::size_t>(m) * n_len;
    for (std::uint32_t n = 0; n < n_len; ++n) out[n] = 0.0f;
    for (std::uint32_t k = 0; k < k_len; ++k) {
      const float av = a[static_cast<std::size_t>(m) * k_len + k];
      const float* br = bt + static_cast<std::size_t>(k) * n_len;
      for (std::uint32_t n = 0; n < n_len; ++n) out[n] += av * br[n];
    }
  }
}

}  // namespace bwsim
