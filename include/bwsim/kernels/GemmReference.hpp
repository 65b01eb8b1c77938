#pragma once
// Host side of the GEMM kernels (tcgen05 and wgmma alike): random inputs and the check of
// D = A x B^T against an fp64 reference.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "bwsim/hw/numeric/DataType.hpp"

namespace bwsim {

// Random inputs of type `t`, uniform in [-2, 2) (fp32 sums stay far from overflow), row r at
// bytes[r * pitch]; `seed` picks the sequence.
void fill_random(std::span<std::byte> bytes, DataType t, std::uint32_t rows, std::uint32_t cols, std::uint32_t pitch,
                 std::uint32_t seed);

struct GemmProblem {
  std::uint32_t m = 0, n = 0, k = 0;
  DataType ab_type = DataType::BF16, d_type = DataType::F32;
};

struct GemmCheck {
  bool matches = true;
  std::string detail;  // a summary, or the first element outside the bound
  double max_error = 0, max_bound = 0;
};

// D (M x N, pitch d_pitch) against an fp64 reference of A (M x K) x B (N x K)^T. The simulated
// tensor core sums each instruction's K products in fp32 and adds them to the fp32 accumulator,
// so |D - ref| <= K * 2^-24 * sum_k |a_k b_k| (recursive fp32 summation, products exact); a bf16 D
// adds its rounding, 2^-8 |ref|. Real tensor cores sum in another order: no bit-exactness claimed.
GemmCheck check_gemm(const GemmProblem& p, std::span<const std::byte> a, std::uint32_t a_pitch,
                     std::span<const std::byte> b, std::uint32_t b_pitch, std::span<const std::byte> d,
                     std::uint32_t d_pitch);

}  // namespace bwsim
