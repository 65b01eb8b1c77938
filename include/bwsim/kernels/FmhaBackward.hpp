#pragma once
// fmha_bwd: the attention backward pass, dQ, dK, dV of O = softmax(Q K^T / sqrt(d)) V, in the
// structure of FlashAttention-4's SM100 backward (flash_attn/cute/flash_bwd_sm100.py, 1-CTA):
// three launches, as there:
//   1. the pre-kernel: D = rowsum(dO o O) and LSE * log2(e) per query row, dQaccum zeroed;
//   2. the main kernel: one CTA per 128-key tile of one query head (or a CTA pair per 256 keys,
//      FmhaBwdParams::two_cta), 16 warps: dQ reduce (0-3), compute (4-11: two warpgroups, each
//      half of the queries of a tile), MMA (12), load (13), the pair's dS relay (14), empty (15). Per 128-query tile of Q: S^T = K Q^T and dP^T = V dO^T into TMEM; the
//      compute warps recompute P = exp2(S^T scale log2 e - LSE log2 e) into TMEM (over S) and
//      dS = P o (dP - D) into TMEM (over dP) and SMEM; dV += P^T dO and dK += dS^T Q with A from
//      TMEM; dQ = dS K into TMEM (over dP; a pair's beside dS), which the reduce warps add into
//      the fp32 dQaccum with TMA reductions (or store as partials). TMEM columns: S/P 0, dV 128,
//      dP/dS 128 + d with dQ there (a pair: at 128 + d + d/2), dK 256 + d.
//   3. the post-kernel: dQ = dQaccum / sqrt(d) in 16 bits (and, with GQA, dK and dV from their
//      fp32 sums: the main kernel then reduce-adds them, as FlashAttention-4 does).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

// Deliberate bugs, to show what the checker reports for each.
enum class FmhaBwdBug {
  None,
  // The compute warps read dP and overwrite its columns with dS without waiting for the dP MMA's
  // commit: a dS written to TMEM before the MMA that writes those columns has completed.
  DsBeforeDp,
  // The dQ reduce warps skip the reduction of the second Q tile of every CTA.
  DqSkipsTile,
};
const char* name_of(FmhaBwdBug bug);
std::optional<FmhaBwdBug> parse_fmha_bwd_bug(std::string_view name);

struct FmhaBwdParams {
  std::uint32_t batch = 2, heads = 4;
  std::uint32_t kv_heads = 0;      // 0: as many as heads; else heads % kv_heads == 0 (GQA)
  std::uint32_t seqlen = 1000;     // queries and keys per sequence (the padded length with seqlens)
  std::vector<std::uint32_t> seqlens;  // variable lengths, one per sequence (sets the batch)
  std::uint32_t headdim = 128;     // of Q, K, V, O: 64 or 128
  DataType dtype = DataType::BF16;
  bool causal = false;
  // CTA pairs (FlashAttention-4's 2-CTA form, head dim 128): a cluster of two CTAs takes 256
  // keys; the leader issues cta_group::2 MMAs (S, dP, dV, dK over the pair's keys, each CTA
  // giving half of Q, dO and of Q^T, dO^T, K^T as the B operands; dQ of 64 query rows per CTA
  // over all 256 keys), the halves of dS cross over DSMEM (cp.async.bulk.shared::cluster), and
  // each Q tile's dQ is reduced once per pair instead of once per CTA.
  bool two_cta = false;
  // How dQ is summed over the key tiles: `reduce` adds each tile's into the fp32 dQaccum with
  // TMA reductions (cp.reduce.async.bulk .add.f32, atomic in the L2, as FlashAttention-4 and
  // CUTLASS do); `partials` stores each one and the post-kernel adds them in key order
  // (deterministic: the same bits every run, at the cost of the partials' traffic).
  enum class DqPath { Reduce, Partials } dq_path = DqPath::Reduce;
  FmhaBwdBug bug = FmhaBwdBug::None;
};

struct FmhaBwdResult {
  RunResult pre, main, post;  // the three launches
  Cycle cycles = 0;           // their sum
  double flops = 0;           // 2.5x the forward's: 5 products of 2 x len^2 x d per head (half if causal)
  std::uint32_t ctas = 0;
  bool checked = false, matches = false;
  std::string detail;
  double max_error[3] = {0, 0, 0};  // dQ, dK, dV
  std::uint64_t dq_digest = 0;      // functional mode: a hash of dQ's bytes (same bits, same digest)
  std::uint64_t dq_bytes = 0;       // dQ's fp32 bytes out of the main kernel (reduced in the L2, or partials)
};

FmhaBwdResult run_fmha_bwd(const HardwareConfig& config, const SimOptions& options, const FmhaBwdParams& params,
                           bool check);

KernelInfo fmha_bwd_kernel_info();

}  // namespace bwsim
