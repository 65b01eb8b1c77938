#pragma once
// The CUDA-core code of the attention backward (fmha_bwd), per thread, as the instructions it
// compiles to (kernel/CoreBlock), in the form of FlashAttention-4's SM100 backward (compute_loop,
// flash_bwd_preprocess.py, flash_bwd_postprocess.py). With pipes.paired_fp32 two values' fp32 work
// is one FFMA2 / FADD2 / FMUL2.
#include <cstdint>

#include "bwsim/kernel/CoreBlock.hpp"

namespace bwsim {

// P = exp2(s * scale_log2 - lse_log2) for `columns` scores of one key (a thread's row of S^T):
// one FFMA per score, the exp2 on the MUFU, F2FP per pair; `masked` (a tile on the causal
// diagonal or past a sequence's end) adds a compare-select per score.
CoreBlock bwd_p_block(std::uint32_t columns, bool masked, const HardwareConfig& config);

// dS = P o (dP - D) for `columns` scores: FADD and FMUL per score, F2FP per pair.
CoreBlock bwd_ds_block(std::uint32_t columns, const HardwareConfig& config);

// The pre-kernel's row of D = sum_c dO_c O_c over `columns` values (16-bit, in pairs): each
// pair of each operand unpacked to fp32 (two ALU ops), one FFMA per element (FFMA2 per pair)
// into 8 partial sums, a tree; and LSE * log2(e) (one FMUL).
CoreBlock bwd_dot_block(std::uint32_t columns, const HardwareConfig& config);

// fp32 to 16-bit with a scale (the post-kernel's dQ, and dK / dV of GQA): FMUL per value, F2FP
// per pair.
CoreBlock bwd_convert_block(std::uint32_t columns, const HardwareConfig& config);

}  // namespace bwsim
