#pragma once
// The fmha_bwd kernel's inputs from the forward and its check against the fp64 backward
// (AttentionBackwardReference) of the same rounded inputs.
#include <cstdint>

#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/kernels/AttentionBackwardReference.hpp"
#include "bwsim/kernels/FmhaBackward.hpp"

namespace bwsim {

// The 16-bit tensors in GMEM ([batch x heads][seqlen][d]; K, V, dK, dV with the K/V heads).
struct BwdTensorAddrs {
  GmemAddr q, k, v, o, d_o, dq, dk, dv;
};

// What the forward leaves for the backward: O (rounded to `t`) and the per-row LSE (fp32, rows
// `pitch` bytes apart), from the fp64 forward of the rounded Q, K, V.
void write_forward_outputs(Simulator& sim, const AttentionShape& s, DataType t, const BwdTensorAddrs& a, GmemAddr lse,
                           std::uint32_t pitch);

// dQ, dK, dV against the fp64 backward of the rounded Q, K, V, O, dO: per element within
// (2^-8 + 2^-16) sum|terms| + 2^-16 sum|P|(|dP| + |D|)|Q or K| / sqrt(d) + 2^-8 |ref|: P and dS
// are rounded to 16 bits before their products (2^-8 relative each, bf16), the fp32 work adds
// far less, and the result is rounded once more. Fills r.checked, r.matches, r.max_error, r.detail.
void check_fmha_bwd_against_reference(Simulator& sim, const AttentionShape& s, DataType t, const BwdTensorAddrs& a,
                                      FmhaBwdResult& r);

}  // namespace bwsim
