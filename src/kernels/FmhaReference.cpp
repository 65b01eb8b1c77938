#include "bwsim/kernels/FmhaReference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bwsim/hw/numeric/Exp2Poly.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"

namespace bwsim {

void check_fmha_against_reference(Simulator& sim, const FmhaParams& p, const std::vector<std::uint32_t>& lens,
                                  std::uint32_t kvh, const std::array<GmemAddr, 4>& qkvo, FmhaResult& r, GmemAddr lse,
                                  std::uint32_t lse_pitch) {
  const std::uint32_t d = p.headdim, dv = p.headdim_v ? p.headdim_v : d;
  const std::uint64_t rows = static_cast<std::uint64_t>(p.batch) * p.seqlen;
  auto floats = [&](GmemAddr base, std::uint64_t elements) {
    const auto src = sim.gmem().bytes(base, 2 * elements);
    std::vector<float> out(elements);
    for (std::size_t e = 0; e < out.size(); ++e) out[e] = load_as_float(p.dtype, &src[2 * e]);
    return out;
  };
  const std::vector<float> qf = floats(qkvo[0], rows * p.heads * d), kf = floats(qkvo[1], rows * kvh * d),
                           vf = floats(qkvo[2], rows * kvh * dv), of = floats(qkvo[3], rows * p.heads * dv);
  auto at = [&](const std::vector<float>& t, std::uint32_t dim, std::uint32_t bh, std::uint32_t tok, std::uint32_t c) {
    return t[(static_cast<std::size_t>(bh) * p.seqlen + tok) * dim + c];
  };
  r.checked = true;
  r.matches = true;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d)), u = std::ldexp(1.0, -8);
  // Software exp2 (exp2_poly) perturbs each p by up to its relative error, in P V and in the sum.
  const double emu = p.algorithm.exp2_emu_freq ? 2 * kExp2PolyMaxRelativeError : 0.0;
  std::vector<double> w(p.seqlen);
  for (std::uint32_t bh = 0; bh < p.batch * p.heads && r.matches; ++bh) {
    const std::uint32_t kb = bh / p.heads * kvh + bh % p.heads / (p.heads / kvh);
    const std::uint32_t len = lens[bh / p.heads];
    for (std::uint32_t t = 0; t < len && r.matches; ++t) {
      const std::uint32_t keys = p.causal ? t + 1 : len;
      double mx = -1e300;
      for (std::uint32_t k = 0; k < keys; ++k) {
        double dot = 0;
        for (std::uint32_t c = 0; c < d; ++c) dot += static_cast<double>(at(qf, d, bh, t, c)) * at(kf, d, kb, k, c);
        w[k] = dot * scale;
        mx = std::max(mx, w[k]);
      }
      double total = 0;
      for (std::uint32_t k = 0; k < keys; ++k) total += (w[k] = std::exp(w[k] - mx));
      if (p.lse) {
        // The kernel's row sum is of fp32 exp2s (MUFU, or the software polynomial) added in fp32,
        // and its max of fp32 scores: ln(sum) is off by their relative errors, the max's error
        // cancels but for the scores' own fp32 rounding (head-dim products).
        float got;
        std::memcpy(&got, sim.gmem().bytes(GmemAddr{lse.value + static_cast<std::uint64_t>(bh) * lse_pitch + 4ull * t}, 4).data(), 4);
        const double ref = mx + std::log(total);
        const double bound = emu + (keys + d) * std::ldexp(1.0, -22) * (1 + std::fabs(ref)) + 1e-6;
        if (!(std::fabs(got - ref) <= bound)) {
          r.matches = false;
          r.detail = fmt::format("LSE[batch {}][head {}][token {}] = {} but the reference is {} (error {:.3g} > bound "
                                 "{:.3g})",
                                 bh / p.heads, bh % p.heads, t, got, ref, std::fabs(got - ref), bound);
        }
      }
      for (std::uint32_t c = 0; c < dv && r.matches; ++c) {
        double ref = 0, mag = 0;
        for (std::uint32_t k = 0; k < keys; ++k) {
          const double v = at(vf, dv, kb, k, c);
          ref += w[k] * v;
          mag += w[k] * std::fabs(v);
        }
        ref /= total;
        // P is rounded to the element type before P V (2^-8 relative for bf16, per term), O once
        // more when stored; fp32 sums and the MUFU's exp2 add far less.
        const double bound = (2 * u + emu) * mag / total + u * std::fabs(ref) + 1e-6;
        const double got = at(of, dv, bh, t, c), err = std::fabs(got - ref);
        r.max_error = std::max(r.max_error, err);
        if (!(err <= bound)) {
          r.matches = false;
          r.detail = fmt::format("O[batch {}][head {}][token {}][{}] = {} but the reference is {} (error {:.3g} > "
                                 "bound {:.3g})",
                                 bh / p.heads, bh % p.heads, t, c, got, ref, err, bound);
        }
      }
    }
  }
  if (r.matches)
    r.detail = fmt::format("O{} the fp64 softmax reference within ({}) sum(p|v|)/sum(p) + 2^-8|O| (max error {:.3g})",
                           p.lse ? " and the LSE (within its fp32 bound) match" : " matches",
                           emu > 0 ? "2^-7 + 2 x 8.6e-5 (software exp2)" : "2^-7", r.max_error);
}

}  // namespace bwsim
