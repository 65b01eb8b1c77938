#pragma once
// The in-instruction sums of a tensor-core MMA as the functional model forms them, shared by
// tcgen05.mma (hw/tensor/sm100/MmaPipe) and wgmma (hw/tensor/sm90/WgmmaPipe):
//   sums[m][n] = sum over k = 0..K-1, in k order, of a[m][k] * bt[k][n],
// each product rounded to fp32 and added in fp32 to a sum that starts at 0 (no fused multiply-add).
// Products of the narrow inputs (and of their block scales) are exact in fp32, so only the order
// of the additions matters; it is fixed, whatever the blocking.
#include <cstdint>

namespace bwsim {

// a: m_len x k_len (row-major), bt: k_len x n_len (B transposed), sums: m_len x n_len.
void product_sums(const float* a, std::uint32_t m_len, const float* bt, std::uint32_t n_len, std::uint32_t k_len,
                  float* sums);

}  // namespace bwsim
