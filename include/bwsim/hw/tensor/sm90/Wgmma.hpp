#pragma once
// SM90 warpgroup MMA (wgmma.mma_async), what the instruction reads: the 64-bit GMMA matrix
// descriptor bit for bit (PTX ISA, wgmma "Matrix Descriptor Format"; CUTLASS
// cute/arch/mma_sm90_desc.hpp), which is not tcgen05's (no fixed version bits 46-48, a 2-bit
// layout type at 62-63 with 128B = 1, 64B = 2, 32B = 3), the m64nNkK shapes, and the register
// fragments of A and of the f32 accumulator. The canonical SMEM layouts are the ones tcgen05
// uses, so operands are addressed with operand_address() of UmmaDescriptor.hpp.
#include <cstdint>
#include <optional>
#include <string>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {

enum class GmmaLayout : std::uint8_t { Interleave = 0, Swizzle128B = 1, Swizzle64B = 2, Swizzle32B = 3 };

struct GmmaDescriptor {
  std::uint64_t raw = 0;
};

struct GmmaDescriptorFields {
  std::uint32_t start_address = 0;        // bytes (the field holds >> 4), bits 0-13
  std::uint32_t leading_byte_offset = 0;  // bytes, bits 16-29 (unused by swizzled K-major layouts)
  std::uint32_t stride_byte_offset = 0;   // bytes, bits 32-45
  std::uint32_t base_offset = 0;          // bits 49-51
  GmmaLayout layout = GmmaLayout::Interleave;  // bits 62-63
};

GmmaDescriptor encode(const GmmaDescriptorFields& f);
// Decodes; an error text for what bwsim does not model (a non-zero base offset).
std::optional<std::string> decode(GmmaDescriptor d, GmmaDescriptorFields& out);
// The same operand in the form operand_address() reads.
SmemDescriptorFields operand_fields(const GmmaDescriptorFields& f);
// The descriptor of a K-major operand at `start_address` in the canonical 128B-swizzle layout TMA
// writes: 128-byte rows in 8-row atoms, atoms SBO = 1024 B apart (LBO unused, set to 16).
GmmaDescriptor k_major_swizzle128_descriptor(std::uint32_t start_address);

// wgmma.mma_async.sync.aligned.m64nNkK.f32.<a>.<b>: M is always 64 (one warpgroup, 16 rows per
// warp); K is 32 bytes of input (16 for f16/bf16, 32 for e4m3/e5m2).
struct WgmmaShape {
  DataType a_type = DataType::BF16, b_type = DataType::BF16;
  std::uint32_t n = 256;
  Major a_major = Major::K, b_major = Major::K;  // MN-major (the .trans immediates): 16-bit types only
};
inline constexpr std::uint32_t kWgmmaM = 64;
std::uint32_t wgmma_k(DataType t);
// An error text unless the shape is one PTX defines with f32 accumulation: N a multiple of 8 in
// 8..256, A and B both f16, both bf16, or each e4m3/e5m2, MN-major only for 16-bit types.
std::optional<std::string> validate(const WgmmaShape& s);
std::string describe(const WgmmaShape& s);  // e.g. "m64n256k16.f32.bf16.bf16"

// Register fragments (PTX ISA, wgmma "Register fragments"): warp w % 4 of the warpgroup holds
// rows 16(w % 4) .. 16(w % 4) + 15 of the 64.
struct FragmentCoord {
  std::uint32_t row = 0, col = 0;  // row of the 64 and column of N (accumulator) or of K (A)
};
// f32 accumulator register `reg` (0 .. N/2 - 1) of `lane`.
FragmentCoord wgmma_accumulator_coord(std::uint32_t warp_in_group, std::uint32_t lane, std::uint32_t reg);
// Element `e` of the A fragment of `lane` (four 32-bit registers: 8 elements of a 16-bit type,
// 16 of an 8-bit one, element e in register e / (4 / size)).
FragmentCoord wgmma_a_coord(DataType t, std::uint32_t warp_in_group, std::uint32_t lane, std::uint32_t e);
inline constexpr std::uint32_t kWgmmaARegisters = 4;  // per thread

}  // namespace bwsim
