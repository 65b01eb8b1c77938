#pragma once
// The fmha kernel's check: O against an fp64 softmax(Q K^T / sqrt(d)) V of the same inputs.
#include <array>
#include <cstdint>
#include <vector>

#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/kernels/Fmha.hpp"

namespace bwsim {

// Q, K, V, O in global memory ([batch x heads][seqlen][head dim], K and V with the K/V heads) and,
// with p.lse, the log-sum-exp rows at `lse` (fp32, rows `lse_pitch` bytes apart); fills
// r.checked, r.matches, r.max_error and r.detail.
void check_fmha_against_reference(Simulator& sim, const FmhaParams& p, const std::vector<std::uint32_t>& lens,
                                  std::uint32_t kv_heads, const std::array<GmemAddr, 4>& qkvo, FmhaResult& r,
                                  GmemAddr lse = {}, std::uint32_t lse_pitch = 0);

}  // namespace bwsim
