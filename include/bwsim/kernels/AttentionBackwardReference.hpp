#pragma once
// The attention backward pass in fp64, the reference the fmha backward kernel is checked against
// (issue: attention backward). For one head, with s = Q K^T / sqrt(d) (causal: key j <= query i):
//   P = exp(s - LSE), LSE = ln sum_j exp(s_j);  D_i = sum_c dO_ic O_ic  (the pre-kernel's rowsum);
//   dV = P^T dO;  dP = dO V^T;  dS = P o (dP - D);  dQ = dS K / sqrt(d);  dK = dS^T Q / sqrt(d).
// GQA: a K/V head's dK and dV are summed over the query heads of its group. O is an input (the
// forward's rounded output, as the kernel reads it), so D is the kernel's D for the same data.
#include <cstdint>
#include <vector>

namespace bwsim {

struct AttentionShape {
  std::uint32_t batch = 1, heads = 1, kv_heads = 1;
  std::uint32_t seqlen = 1;            // the tensors' token pitch
  std::vector<std::uint32_t> lens;     // per sequence (queries = keys); empty: seqlen each
  std::uint32_t headdim = 64, headdim_v = 64;
  bool causal = false;
  std::uint32_t len(std::uint32_t b) const { return lens.empty() ? seqlen : lens[b]; }
};

// Tensors are [batch x heads][seqlen][dim] (K, V, dK, dV with kv_heads), row-major; tokens past a
// sequence's length are ignored (their gradients 0).
struct AttentionGrads {
  std::vector<double> dq, dk, dv;
  std::vector<double> lse, delta;  // [batch x heads][seqlen]: LSE and D per query row
  // For error bounds, per element of dq, dk, dv: the sum of its terms' magnitudes (dV: |P dO|;
  // dK, dQ: |dS Q| and |dS K| / sqrt(d)) and, for dK and dQ, of |P| (|dP| + |D|) |Q| (|K|) /
  // sqrt(d), what an error relative to P, dP and D in each dS becomes.
  std::vector<double> dq_abs, dk_abs, dv_abs, dq_p_abs, dk_p_abs;
};

AttentionGrads attention_backward_reference(const AttentionShape& s, const std::vector<double>& q,
                                            const std::vector<double>& k, const std::vector<double>& v,
                                            const std::vector<double>& o, const std::vector<double>& d_o);

// The forward in fp64 (softmax(Q K^T / sqrt(d)) V), for tests of the backward's derivatives and
// the backward kernel's inputs; `lse`, if given, gets each query row's log-sum-exp
// ([batch x heads][seqlen], 0 past a sequence's length).
std::vector<double> attention_forward_reference(const AttentionShape& s, const std::vector<double>& q,
                                                const std::vector<double>& k, const std::vector<double>& v,
                                                std::vector<double>* lse = nullptr);

}  // namespace bwsim
