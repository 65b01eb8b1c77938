#pragma once
// Host side of the GEMM kernels (tcgen05 and wgmma alike): random inputs and the check of
// D = A x B^T against an fp64 reference.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "bwsim/hw/numeric/DataType.hpp"

namespace bwsim {

// Random inputs of type `t`, row r at bytes[r * pitch]; `seed` picks the sequence. Float types
// uniform in [-2, 2) (fp32 sums stay far from overflow), FP4 every code (`packed`: two per byte,
// the lower column in the low nibble), s8/u8 every value.
void fill_random(std::span<std::byte> bytes, DataType t, std::uint32_t rows, std::uint32_t cols, std::uint32_t pitch,
                 std::uint32_t seed, bool packed = false);

// Block scale factors in CUTLASS's GMEM layout (Sm1xxBlockScaledConfig): 128-row x 4-factor atoms
// of 512 bytes, factor j of row r at 16 (r % 32) + 4 (r % 128 / 32) + j % 4 within atom
// (r / 128, j / 4), the atoms of a 128-row block consecutive along K.
struct GemmScales {
  std::span<const std::byte> a, b;
  DataType type = DataType::UE8M0;
  std::uint32_t block = 0;  // elements of K per factor; 0: unscaled
};
// Atoms along K for k elements at `block` per factor, and a factor's byte offset.
std::uint32_t scale_atoms_k(std::uint32_t k, std::uint32_t block);
std::uint64_t scale_offset(std::uint32_t row, std::uint32_t j, std::uint32_t atoms_k);
// Random factors for `rows` rows: ue8m0 2^-3..2^3, ue4m3 0.5..1.875.
void fill_random_scales(std::span<std::byte> bytes, DataType t, std::uint32_t seed);

struct GemmProblem {
  std::uint32_t m = 0, n = 0, k = 0;
  DataType ab_type = DataType::BF16, d_type = DataType::F32;
  bool packed = false;  // A and B rows hold FP4 two per byte
  GemmScales scales;
};

struct GemmCheck {
  bool matches = true;
  std::string detail;  // a summary, or the first element outside the bound
  double max_error = 0;
};

// D (M x N, pitch d_pitch) against an fp64 reference of A (M x K) x B (N x K)^T. The simulated
// tensor core sums each instruction's K products in fp32 and adds them to the fp32 accumulator,
// so |D - ref| <= K * 2^-24 * sum_k |a_k b_k| (recursive fp32 summation, products exact); a bf16 D
// adds its rounding, 2^-8 |ref|. Real tensor cores sum in another order: no bit-exactness claimed.
// Block-scaled products (a s_a)(b s_b) are exact in fp32 as well (the factors are powers of two
// or 4-bit mantissas), so the bound is the same; an s32 D (kind::i8) must equal the reference.
GemmCheck check_gemm(const GemmProblem& p, std::span<const std::byte> a, std::uint32_t a_pitch,
                     std::span<const std::byte> b, std::uint32_t b_pitch, std::span<const std::byte> d,
                     std::uint32_t d_pitch);

}  // namespace bwsim
