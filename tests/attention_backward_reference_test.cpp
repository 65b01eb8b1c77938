// The fp64 attention backward (kernels/AttentionBackwardReference): its dQ, dK and dV are the
// derivatives of sum(dO o O) by central differences of the fp64 forward, with GQA (dK / dV summed
// over a group's query heads), causal masking and ragged lengths; and a case worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "bwsim/core/Bits.hpp"
#include "bwsim/kernels/AttentionBackwardReference.hpp"

namespace bwsim {
namespace {

std::vector<double> random_tensor(std::size_t n, std::uint64_t seed) {
  std::vector<double> t(n);
  for (double& x : t) x = static_cast<double>(splitmix64(seed) >> 11) * 0x1.0p-53 * 2 - 1;  // [-1, 1)
  return t;
}

double loss(const AttentionShape& s, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, const std::vector<double>& d_o) {
  const std::vector<double> o = attention_forward_reference(s, q, k, v);
  double l = 0;
  for (std::size_t i = 0; i < o.size(); ++i) l += o[i] * d_o[i];
  return l;
}

void expect_derivatives(const AttentionShape& s) {
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.seqlen;
  std::vector<double> q = random_tensor(rows * s.heads * s.headdim, 1), k = random_tensor(rows * s.kv_heads * s.headdim, 2),
                      v = random_tensor(rows * s.kv_heads * s.headdim_v, 3),
                      d_o = random_tensor(rows * s.heads * s.headdim_v, 4);
  const AttentionGrads g = attention_backward_reference(s, q, k, v, attention_forward_reference(s, q, k, v), d_o);
  constexpr double h = 1e-5;
  auto check = [&](std::vector<double>& x, const std::vector<double>& dx, const char* name) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double keep = x[i];
      x[i] = keep + h;
      const double up = loss(s, q, k, v, d_o);
      x[i] = keep - h;
      const double down = loss(s, q, k, v, d_o);
      x[i] = keep;
      const double numeric = (up - down) / (2 * h);
      ASSERT_NEAR(dx[i], numeric, 1e-7 + 1e-6 * std::fabs(numeric)) << name << "[" << i << "]";
    }
  };
  check(q, g.dq, "dQ");
  check(k, g.dk, "dK");
  check(v, g.dv, "dV");
}

TEST(AttentionBackwardReferenceTest, GradientsAreTheForwardsDerivatives) {
  expect_derivatives({.batch = 2, .heads = 4, .kv_heads = 2, .seqlen = 5, .lens = {5, 3}, .headdim = 8, .headdim_v = 4});
  expect_derivatives({.batch = 2, .heads = 2, .kv_heads = 1, .seqlen = 6, .lens = {6, 4}, .headdim = 4, .headdim_v = 8,
                      .causal = true});
}

// One query, one key: P = 1, O = V, so dV = dO, D = dO . V and dS = dP - D = 0: dQ = dK = 0.
// Tokens past a sequence's length get no gradient.
TEST(AttentionBackwardReferenceTest, OneKeyByHand) {
  const AttentionShape s{.seqlen = 2, .lens = {1}, .headdim = 2, .headdim_v = 2};
  const std::vector<double> q{1, 2, 9, 9}, k{3, -1, 9, 9}, v{0.5, -2, 9, 9}, d_o{4, 1, 9, 9};
  const AttentionGrads g = attention_backward_reference(s, q, k, v, v, d_o);
  EXPECT_EQ(g.dv, (std::vector<double>{4, 1, 0, 0}));
  EXPECT_EQ(g.dq, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(g.dk, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(g.delta[0], 4 * 0.5 + 1 * -2.0);
  EXPECT_DOUBLE_EQ(g.lse[0], (1 * 3 + 2 * -1) / std::sqrt(2.0));
}

}  // namespace
}  // namespace bwsim
