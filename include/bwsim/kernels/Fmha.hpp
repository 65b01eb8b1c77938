#pragma once
// fmha: fused multi-head attention forward, O = softmax(Q K^T * scale) V, in the structure of
// CUTLASS's SM100 FMHA forward kernel (examples/77_blackwell_fmha): 16 warps in the roles
// Softmax0 (0-3), Softmax1 (4-7), Correction (8-11), MMA (12), Load (13), Epilogue (14), Empty
// (15) with setmaxnreg per role; two 128-row Q tiles per CTA, one per softmax warpgroup; K and V
// streamed through one multi-stage SMEM pipeline; TMEM columns S0 0, S1 128 (P_i packed as bf16
// inside S_i at +32), O0 256, O1 384.
#include <cstdint>
#include <string>
#include <vector>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

struct FmhaParams {
  std::uint32_t batch = 2, heads = 4;
  std::uint32_t kv_heads = 0;    // 0: as many as heads; else heads % kv_heads == 0 (GQA / MQA)
  std::uint32_t seqlen = 1000;   // queries and keys per sequence
  // Variable lengths: one per sequence of the batch (then batch = their count and seqlen, the
  // padded length of the tensors, their maximum); empty: every sequence has seqlen tokens.
  std::vector<std::uint32_t> seqlens;
  std::uint32_t headdim = 128;   // 64 or 128
  DataType dtype = DataType::BF16;  // bf16 or f16 for Q, K, V, O
  bool causal = false;
  std::uint32_t stages = 0;      // K/V stages; 0: as many as SMEM allows
};

struct FmhaResult {
  RunResult run;
  double flops = 0;  // useful work, the usual count: 4 x len^2 x headdim per sequence and head, half if causal
  std::uint32_t stages = 0, ctas = 0;
  bool checked = false, matches = false;
  std::string detail;
  double max_error = 0;
  std::uint64_t rescales = 0;  // O rescales by the correction warps (per warp and Q tile)
};

FmhaResult run_fmha(const HardwareConfig& config, const SimOptions& options, const FmhaParams& params, bool check);

KernelInfo fmha_kernel_info();

}  // namespace bwsim
