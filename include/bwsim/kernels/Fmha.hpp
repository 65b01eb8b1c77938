#pragma once
// fmha: fused multi-head attention forward, O = softmax(Q K^T * scale) V, in the structure of
// CUTLASS's SM100 FMHA forward kernel (examples/77_blackwell_fmha) and FlashAttention-4's
// (flash_attn/cute/flash_fwd_sm100.py), which share it: 16 warps in the roles Softmax0 (0-3),
// Softmax1 (4-7), Correction (8-11), MMA (12), Load (13), Epilogue (14), Empty (15) with
// setmaxnreg per role; two 128-row Q tiles per CTA, one per softmax warpgroup, ping-ponging
// against the MMA warp; K and V streamed through one multi-stage SMEM pipeline; TMEM columns S0 0,
// S1 128 (P_i packed as bf16 inside S_i at +32), O0 256, O1 384. The softmax and correction code
// runs instruction by instruction (kernels/SoftmaxCode). FmhaAlgorithm chooses between the
// CUTLASS example's algorithm and FlashAttention-4's.
#include <cstdint>
#include <string>
#include <vector>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

// The algorithmic choices that distinguish FlashAttention-4's forward from the CUTLASS example.
struct FmhaAlgorithm {
  // Software exp2 on the FMA pipe (exp2_poly) for the pairs fa4_emulated_pairs(128, freq, res,
  // start) picks; freq 0: every exp2 on the MUFU.
  std::uint32_t exp2_emu_freq = 0, exp2_emu_res = 4, exp2_emu_start = 1;
  // The row max lags until it grew by more than this (log2 units); 0: O is rescaled wherever a
  // row's max grew.
  double rescale_threshold = 0;
  bool persistent = false;  // one CTA per SM looping over units; false: one CTA per unit
  bool lpt = false;         // longest-processing-time-first order (FmhaSchedule)
  bool separate_o = false;  // O staged in its own SMEM, not in Q's (more overlap, fewer K/V stages)

  static FmhaAlgorithm cutlass() { return {}; }
  // FlashAttention-4 (1-CTA MMA) as flash_fwd_sm100.py sets it up for 16-bit inputs: exp2
  // emulation for head dims <= 128 (freq 16, start fragment 1: _TUNING_CONFIG's causal entry and
  // the default) and for causal 192 (freq 32); rescale threshold 8; causal: LPT order over one CTA
  // per unit (SingleTileLPTScheduler), else static persistent; O in its own SMEM unless the QK
  // head dim is 192 (overlap_sO_sQ).
  static FmhaAlgorithm fa4(std::uint32_t headdim, bool causal);
};

struct FmhaParams {
  std::uint32_t batch = 2, heads = 4;
  std::uint32_t kv_heads = 0;    // 0: as many as heads; else heads % kv_heads == 0 (GQA / MQA)
  std::uint32_t seqlen = 1000;   // queries and keys per sequence
  // Variable lengths: one per sequence of the batch (then batch = their count and seqlen, the
  // padded length of the tensors, their maximum); empty: every sequence has seqlen tokens.
  std::vector<std::uint32_t> seqlens;
  std::uint32_t headdim = 128;   // of Q and K: 64, 128 or 192
  std::uint32_t headdim_v = 0;   // of V and O: 64 or 128; 0: as headdim
  DataType dtype = DataType::BF16;  // bf16 or f16 for Q, K, V, O
  bool causal = false;
  // Also write each query row's log-sum-exp of its scaled scores, ln sum_k exp(s_k / sqrt(d)), as
  // fp32 [batch x heads][seqlen] (what the backward pass recomputes P from); -inf for a row with
  // no keys.
  bool lse = false;
  std::uint32_t stages = 0;      // K/V stages; 0: as many as SMEM allows
  FmhaAlgorithm algorithm;
  // Timing mode's scores (RowMaxModel): the standard deviation of s * softmax_scale.
  double score_std = 1.0;
};

struct FmhaResult {
  RunResult run;
  double flops = 0;  // useful work, the usual count: 2 x len^2 x (headdim + headdim_v) per sequence and head, half if causal
  std::uint32_t stages = 0, ctas = 0, units = 0;  // units: 256-row work units (ctas fewer when persistent)
  bool checked = false, matches = false;
  std::string detail;
  double max_error = 0;
  std::uint64_t rescales = 0;  // O rescales by the correction warps (per warp and Q tile)
  std::uint64_t exp2_emulated = 0, exp2_mufu = 0;  // exp2 per score of the softmax, by where it ran
};

FmhaResult run_fmha(const HardwareConfig& config, const SimOptions& options, const FmhaParams& params, bool check);

KernelInfo fmha_kernel_info();

}  // namespace bwsim
