#include "bwsim/kernels/FmhaBackwardCheck.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "bwsim/hw/numeric/NumberFormats.hpp"

namespace bwsim {
namespace {

std::vector<double> read(Simulator& sim, GmemAddr at, DataType t, std::size_t elements) {
  const auto src = sim.gmem().bytes(at, 2 * elements);
  std::vector<double> out(elements);
  for (std::size_t e = 0; e < elements; ++e) out[e] = load_as_float(t, &src[2 * e]);
  return out;
}

}  // namespace

void write_forward_outputs(Simulator& sim, const AttentionShape& s, DataType t, const BwdTensorAddrs& a, GmemAddr lse,
                           std::uint32_t pitch) {
  const std::size_t q_elems = static_cast<std::size_t>(s.batch) * s.heads * s.seqlen * s.headdim,
                    kv_elems = static_cast<std::size_t>(s.batch) * s.kv_heads * s.seqlen * s.headdim;
  const std::vector<double> q = read(sim, a.q, t, q_elems), k = read(sim, a.k, t, kv_elems),
                            v = read(sim, a.v, t, kv_elems);
  std::vector<double> lse_rows;
  const std::vector<double> o = attention_forward_reference(s, q, k, v, &lse_rows);
  const auto o_bytes = sim.gmem().bytes(a.o, 2 * q_elems);
  for (std::size_t e = 0; e < q_elems; ++e) store_from_float(t, static_cast<float>(o[e]), &o_bytes[2 * e]);
  for (std::uint32_t bh = 0; bh < s.batch * s.heads; ++bh)
    for (std::uint32_t i = 0; i < s.seqlen; ++i) {
      const float value = i < s.len(bh / s.heads) ? static_cast<float>(lse_rows[static_cast<std::size_t>(bh) * s.seqlen + i])
                                                   : -std::numeric_limits<float>::infinity();
      std::memcpy(sim.gmem().bytes(GmemAddr{lse.value + static_cast<std::uint64_t>(bh) * pitch + 4ull * i}, 4).data(),
                  &value, 4);
    }
}

void check_fmha_bwd_against_reference(Simulator& sim, const AttentionShape& s, DataType t, const BwdTensorAddrs& a,
                                      FmhaBwdResult& r) {
  const std::size_t q_elems = static_cast<std::size_t>(s.batch) * s.heads * s.seqlen * s.headdim,
                    kv_elems = static_cast<std::size_t>(s.batch) * s.kv_heads * s.seqlen * s.headdim;
  const std::vector<double> q = read(sim, a.q, t, q_elems), k = read(sim, a.k, t, kv_elems),
                            v = read(sim, a.v, t, kv_elems), o = read(sim, a.o, t, q_elems),
                            d_o = read(sim, a.d_o, t, q_elems);
  const AttentionGrads g = attention_backward_reference(s, q, k, v, o, d_o);
  const double u = std::ldexp(1.0, -8), small = std::ldexp(1.0, -16);
  r.checked = true;
  r.matches = true;
  struct Grad {
    const char* name;
    GmemAddr at;
    const std::vector<double>& ref;
    const std::vector<double>& abs;
    const std::vector<double>* p_abs;
    std::uint32_t heads;
  };
  const Grad grads[3] = {{"dQ", a.dq, g.dq, g.dq_abs, &g.dq_p_abs, s.heads},
                         {"dK", a.dk, g.dk, g.dk_abs, &g.dk_p_abs, s.kv_heads},
                         {"dV", a.dv, g.dv, g.dv_abs, nullptr, s.kv_heads}};
  for (std::uint32_t which = 0; which < 3 && r.matches; ++which) {
    const Grad& gr = grads[which];
    const std::vector<double> got = read(sim, gr.at, t, gr.ref.size());
    for (std::uint32_t bh = 0; bh < s.batch * gr.heads && r.matches; ++bh)
      for (std::uint32_t i = 0; i < s.len(bh / gr.heads) && r.matches; ++i)
        for (std::uint32_t c = 0; c < s.headdim; ++c) {
          const std::size_t e = (static_cast<std::size_t>(bh) * s.seqlen + i) * s.headdim + c;
          const double bound = (u + small) * gr.abs[e] + (gr.p_abs ? small * (*gr.p_abs)[e] : 0.0) +
                               u * std::fabs(gr.ref[e]) + 1e-6;
          const double err = std::fabs(got[e] - gr.ref[e]);
          r.max_error[which] = std::max(r.max_error[which], err);
          if (!(err <= bound)) {
            r.matches = false;
            r.detail = fmt::format("{}[batch {}][head {}][token {}][{}] = {} but the reference is {} (error {:.3g} > "
                                   "bound {:.3g})",
                                   gr.name, bh / gr.heads, bh % gr.heads, i, c, got[e], gr.ref[e], err, bound);
            break;
          }
        }
  }
  if (r.matches)
    r.detail = fmt::format("dQ, dK, dV match the fp64 backward within 2^-8 of their terms' magnitudes and of themselves "
                           "(max errors {:.3g}, {:.3g}, {:.3g})",
                           r.max_error[0], r.max_error[1], r.max_error[2]);
}

}  // namespace bwsim
