#pragma once
// The two small kernels around the attention backward's main kernel (FmhaBackward.hpp), as
// FlashAttention-4 runs them (flash_bwd_preprocess.py, flash_bwd_postprocess.py): one CTA of 4
// warps per 128 rows of one head; each warp takes 32 rows.
#include <cstdint>
#include <functional>
#include <utility>
#include <span>

#include "bwsim/hw/memory/TensorMap.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {

// The pre-kernel's tensors: O and dO as the main kernel loads them (16-bit, 64 x 128-row boxes,
// 128-byte swizzle), the forward's LSE (fp32 rows of 128), and what it writes: D and LSE * log2(e)
// (fp32 rows of 128), dQaccum zeroed (fp32, 32 x 128-row boxes; null when dQ goes through
// partials) and, with GQA, the fp32 sums of dK and dV (the same box, K/V heads; null without).
struct BwdPreTensors {
  const TensorMap *o, *d_o, *lse, *lse_log2, *delta, *dq_acc;
  const TensorMap *dk_acc = nullptr, *dv_acc = nullptr;
  std::uint32_t heads = 1, kv_heads = 1, headdim = 128, seqlen = 0;
  std::uint32_t bh = 0;  // (batch, head) pairs
};
RunResult run_bwd_preprocess(Simulator& sim, const BwdPreTensors& t);

// One fp32 -> 16-bit conversion of the post-kernel: `src` (fp32, 32 x 128-row boxes) times
// `scale` into `dst` (16-bit, boxes of the full width x 32 rows), `slabs` (batch x head) of
// `rows` rows and `cols` columns. With `parts`, src holds that many partial sums per slab (slab
// s, part k at src slab s * parts + k) and each 128-row block m adds those `live(s, m)` names,
// [first, last), in order: the deterministic alternative to reductions.
struct BwdConvertJob {
  const TensorMap *src, *dst;
  float scale = 1;
  std::uint32_t slabs = 1, rows = 0, cols = 128;
  std::uint32_t parts = 1;
  std::function<std::pair<std::uint32_t, std::uint32_t>(std::uint32_t slab, std::uint32_t m)> live;
};
RunResult run_bwd_convert(Simulator& sim, std::span<const BwdConvertJob> jobs);

}  // namespace bwsim
