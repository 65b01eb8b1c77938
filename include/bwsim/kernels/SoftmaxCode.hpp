#pragma once
// The CUDA-core code of an attention softmax, one row per thread (one warp: 32 rows), as the
// instructions it compiles to (kernel/CoreBlock): what FlashAttention-4's softmax warps and the
// H100 softmax twin (tools/calibration/softmax_row.cuh) run per tile of S.
//
// Per row of `columns` scores s (registers, loaded from TMEM), as softmax_row.cuh writes it: the
// row max with the running max (8 partial maxima and a tree: no serial chain over the row), -max *
// scale_log2, the correction exp2 of the old max minus the new, x = s * scale_log2 - max *
// scale_log2 (one FFMA per score), p = exp2(x) on the MUFU or, for the scores `emulate` picks, in
// software (FlashAttention-4's trick: clamp to -127, floor by a round-down add of 1.5 x 2^23, the
// fraction, a degree-3 polynomial by Horner, the integer part shifted and added to the exponent),
// the running sum times the correction plus the row sum (8 partial sums and a tree), and the pairs
// packed to bf16x2. On an SM with pipes.paired_fp32 the fp32 work of two scores is one FFMA2 /
// FADD2, and with pipes.minmax3 the max takes two scores per FMNMX3. Blocks are list-scheduled
// as a compiler would (CoreBlock::Order::AsCompiled): source order is not issue order.
#include <cstdint>
#include <functional>

#include "bwsim/kernel/CoreBlock.hpp"

namespace bwsim {

struct SoftmaxRowCode {
  std::uint32_t columns = 128;  // scores per row (even)
  // Whether the exp2 of score i is emulated in software; null: none is. Paired code emulates
  // both scores of a pair or neither.
  std::function<bool(std::uint32_t score)> emulate;
  bool paired = false;  // FFMA2 / FADD2 for two scores' fp32 work (SM100)
  // FlashAttention-4's rescale threshold: the new max replaces the old one only if it grew by
  // more than the threshold (a compare and three selects after the correction exp2).
  bool stale_max = false;
};

// FlashAttention-4's choice of emulated scores (softmax.py, apply_exp2_convert): in each fragment
// of 32 scores, the pair whose first element k (0, 2, ..., 30) has k % freq >= freq - res; the
// fragments before `start_fragment` and the last one use the MUFU only. (freq 16, res 4: pairs at
// 12, 14, 28, 30 of each emulated fragment; freq 10: at 6, 8, 16, 18, 26, 28.)
std::function<bool(std::uint32_t score)> fa4_emulated_pairs(std::uint32_t columns, std::uint32_t freq, std::uint32_t res,
                                                            std::uint32_t start_fragment);

// The block for one tile of rows on `config`.
CoreBlock softmax_row_block(const SoftmaxRowCode& code, const HardwareConfig& config);

// The correction warps' code per row of O (`columns` values loaded from TMEM): the rescale by the
// row's factor (one FMUL per value, FMUL2 per pair with pipes.paired_fp32), and the final
// normalisation (1 / row sum on the MUFU, the multiply, and the F2FP packing of each pair).
CoreBlock o_rescale_block(std::uint32_t columns, const HardwareConfig& config);
CoreBlock o_normalize_block(std::uint32_t columns, const HardwareConfig& config);

}  // namespace bwsim
