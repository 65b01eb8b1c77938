#include "bwsim/kernels/AttentionBackwardReference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bwsim {
namespace {

// One (batch, head)'s view: row i of a [tokens][dim] slab.
struct Slab {
  const std::vector<double>* t;
  std::size_t base;
  std::uint32_t dim;
  double operator()(std::uint32_t i, std::uint32_t c) const { return (*t)[base + static_cast<std::size_t>(i) * dim + c]; }
};

std::size_t offset(const AttentionShape& s, std::uint32_t bh, std::uint32_t dim) {
  return static_cast<std::size_t>(bh) * s.seqlen * dim;
}

// The K/V head a query head reads (GQA: heads / kv_heads query heads per group).
std::uint32_t kv_of(const AttentionShape& s, std::uint32_t bh) {
  return bh / s.heads * s.kv_heads + bh % s.heads / (s.heads / s.kv_heads);
}

// Row i's probabilities over its keys (causal: 0..i) and its log-sum-exp.
double probabilities(const AttentionShape& s, const Slab& q, const Slab& k, std::uint32_t i, std::uint32_t len,
                     std::vector<double>& p) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.headdim));
  const std::uint32_t keys = s.causal ? i + 1 : len;
  double mx = -std::numeric_limits<double>::infinity();
  for (std::uint32_t j = 0; j < keys; ++j) {
    double dot = 0;
    for (std::uint32_t c = 0; c < s.headdim; ++c) dot += q(i, c) * k(j, c);
    p[j] = dot * scale;
    mx = std::max(mx, p[j]);
  }
  double total = 0;
  for (std::uint32_t j = 0; j < keys; ++j) total += std::exp(p[j] - mx);
  const double lse = mx + std::log(total);
  for (std::uint32_t j = 0; j < keys; ++j) p[j] = std::exp(p[j] - lse);
  std::fill(p.begin() + keys, p.begin() + len, 0.0);
  return lse;
}

}  // namespace

std::vector<double> attention_forward_reference(const AttentionShape& s, const std::vector<double>& q,
                                                const std::vector<double>& k, const std::vector<double>& v,
                                                std::vector<double>* lse) {
  std::vector<double> o(static_cast<std::size_t>(s.batch) * s.heads * s.seqlen * s.headdim_v, 0.0);
  if (lse) lse->assign(static_cast<std::size_t>(s.batch) * s.heads * s.seqlen, 0.0);
  std::vector<double> p(s.seqlen);
  for (std::uint32_t bh = 0; bh < s.batch * s.heads; ++bh) {
    const std::uint32_t kb = kv_of(s, bh), len = s.len(bh / s.heads);
    const Slab qs{&q, offset(s, bh, s.headdim), s.headdim}, ks{&k, offset(s, kb, s.headdim), s.headdim},
        vs{&v, offset(s, kb, s.headdim_v), s.headdim_v};
    for (std::uint32_t i = 0; i < len; ++i) {
      const double row_lse = probabilities(s, qs, ks, i, len, p);
      if (lse) (*lse)[static_cast<std::size_t>(bh) * s.seqlen + i] = row_lse;
      for (std::uint32_t c = 0; c < s.headdim_v; ++c) {
        double sum = 0;
        for (std::uint32_t j = 0; j < len; ++j) sum += p[j] * vs(j, c);
        o[offset(s, bh, s.headdim_v) + static_cast<std::size_t>(i) * s.headdim_v + c] = sum;
      }
    }
  }
  return o;
}

AttentionGrads attention_backward_reference(const AttentionShape& s, const std::vector<double>& q,
                                            const std::vector<double>& k, const std::vector<double>& v,
                                            const std::vector<double>& o, const std::vector<double>& d_o) {
  const std::uint32_t d = s.headdim, dv = s.headdim_v;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  AttentionGrads g;
  g.dq.assign(q.size(), 0.0);
  g.dk.assign(k.size(), 0.0);
  g.dv.assign(v.size(), 0.0);
  g.dq_abs = g.dq_p_abs = g.dq;
  g.dk_abs = g.dk_p_abs = g.dk;
  g.dv_abs = g.dv;
  g.lse.assign(static_cast<std::size_t>(s.batch) * s.heads * s.seqlen, 0.0);
  g.delta.assign(g.lse.size(), 0.0);
  std::vector<double> p(s.seqlen), ds(s.seqlen), dp_mag(s.seqlen);
  for (std::uint32_t bh = 0; bh < s.batch * s.heads; ++bh) {
    const std::uint32_t kb = kv_of(s, bh), len = s.len(bh / s.heads);
    const Slab qs{&q, offset(s, bh, d), d}, ks{&k, offset(s, kb, d), d}, vs{&v, offset(s, kb, dv), dv},
        os{&o, offset(s, bh, dv), dv}, dos{&d_o, offset(s, bh, dv), dv};
    for (std::uint32_t i = 0; i < len; ++i) {
      const std::size_t row = static_cast<std::size_t>(bh) * s.seqlen + i;
      g.lse[row] = probabilities(s, qs, ks, i, len, p);
      double delta = 0;
      for (std::uint32_t c = 0; c < dv; ++c) delta += dos(i, c) * os(i, c);
      g.delta[row] = delta;
      for (std::uint32_t j = 0; j < len; ++j) {
        if (p[j] == 0) {
          ds[j] = dp_mag[j] = 0;
          continue;
        }
        double dp = 0;
        for (std::uint32_t c = 0; c < dv; ++c) {
          dp += dos(i, c) * vs(j, c);
          const std::size_t at = offset(s, kb, dv) + static_cast<std::size_t>(j) * dv + c;
          g.dv[at] += p[j] * dos(i, c);
          g.dv_abs[at] += std::fabs(p[j] * dos(i, c));
        }
        ds[j] = p[j] * (dp - delta);
        dp_mag[j] = p[j] * (std::fabs(dp) + std::fabs(delta));
      }
      for (std::uint32_t j = 0; j < len; ++j) {
        if (p[j] == 0) continue;
        for (std::uint32_t c = 0; c < d; ++c) {
          const std::size_t at_q = offset(s, bh, d) + static_cast<std::size_t>(i) * d + c,
                            at_k = offset(s, kb, d) + static_cast<std::size_t>(j) * d + c;
          g.dq[at_q] += ds[j] * ks(j, c) * scale;
          g.dk[at_k] += ds[j] * qs(i, c) * scale;
          g.dq_abs[at_q] += std::fabs(ds[j] * ks(j, c)) * scale;
          g.dk_abs[at_k] += std::fabs(ds[j] * qs(i, c)) * scale;
          g.dq_p_abs[at_q] += dp_mag[j] * std::fabs(ks(j, c)) * scale;
          g.dk_p_abs[at_k] += dp_mag[j] * std::fabs(qs(i, c)) * scale;
        }
      }
    }
  }
  return g;
}

}  // namespace bwsim
