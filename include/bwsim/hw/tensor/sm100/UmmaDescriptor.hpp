#pragma once
// The two tcgen05.mma descriptors, bit for bit as the hardware reads them (PTX ISA, tcgen05
// "Shared memory descriptor" and "Instruction descriptor"; CUTLASS mma_sm100_desc.hpp):
// encoders for kernels, decoders with validation for the MMA pipe, and the canonical-layout
// address function that maps an operand element to its SMEM byte.
#include <cstdint>
#include <optional>
#include <string>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"

namespace bwsim {

// Which dimension is contiguous in SMEM: K (the usual "TN" GEMM operand) or M/N.
enum class Major : std::uint8_t { K, MN };

// The layout-type field (bits 61-63) of the SMEM descriptor.
enum class UmmaLayout : std::uint8_t { SwizzleNone = 0, Swizzle128BBase32B = 1, Swizzle128B = 2, Swizzle64B = 4, Swizzle32B = 6 };

// 64-bit SMEM matrix descriptor.
struct SmemDescriptor {
  std::uint64_t raw = 0;
};
// Bits 0-13 hold the start address >> 4. A K loop's descriptors differ only there (CUTLASS
// advances the start address by each k-block's bytes), so what the other bits decode to can be
// kept from one MMA to the next.
inline constexpr std::uint64_t kSmemDescriptorStartBits = (1ull << 14) - 1;
inline std::uint32_t start_address_of(SmemDescriptor d) {
  return static_cast<std::uint32_t>((d.raw & kSmemDescriptorStartBits) << 4);
}
inline std::uint64_t without_start_address(SmemDescriptor d) { return d.raw & ~kSmemDescriptorStartBits; }

struct SmemDescriptorFields {
  std::uint32_t start_address = 0;  // bytes (the field holds >> 4)
  std::uint32_t leading_byte_offset = 0;  // bytes (LBO)
  std::uint32_t stride_byte_offset = 0;   // bytes (SBO)
  std::uint32_t base_offset = 0;          // 3 bits
  bool lbo_mode = false;
  UmmaLayout layout = UmmaLayout::SwizzleNone;
};

SmemDescriptor encode(const SmemDescriptorFields& f);
// Decodes; an error text if a fixed field or the layout code is invalid.
std::optional<std::string> decode(SmemDescriptor d, SmemDescriptorFields& out);

Swizzle swizzle_of(UmmaLayout l);
UmmaLayout umma_layout_of(Swizzle s);

// The SMEM byte address of element (mn, k) of an operand described by `f` with elements of
// `elem_bytes` and the given major-ness (canonical layouts, swizzle applied to the address).
std::uint32_t operand_address(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t mn,
                              std::uint32_t k);

// The SMEM bytes an operand of rows x k elements can touch, [begin, end): its corner elements'
// addresses widened to their 128-byte rows (a swizzle permutes 16-byte chunks only inside a row).
struct SmemSpan {
  std::uint32_t begin, end;
};
SmemSpan operand_span(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t rows,
                      std::uint32_t k);
// The lowest and highest corner element's offsets from the start address (which they do not
// depend on); the span of an operand starting at `start` follows from them (span_at).
struct SpanOffsets {
  std::uint32_t lo = 0, hi = 0;
};
SpanOffsets operand_span_offsets(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes,
                                 std::uint32_t rows, std::uint32_t k);
inline SmemSpan span_at(std::uint32_t start, SpanOffsets o) {
  return {(start + o.lo) & ~127u, ((start + o.hi) | 127u) + 1};
}

// The MMA kinds (PTX ISA tcgen05.mma .kind): the dense ones and the three block-scaled ones,
// whose instruction descriptor has the block-scaled layout and which take scale-factor operands.
enum class MmaKind : std::uint8_t { F16, TF32, F8F6F4, I8, MXF8F6F4, MXF4, MXF4NVF4 };
std::string_view name_of(MmaKind k);
bool is_block_scaled(MmaKind k);

// .scale_vec::NX of a block-scaled MMA: scale factors per row of A (column of B) per instruction,
// each for K / N elements (1X: 32 of K = 32; 2X: 32 of K = 64; 4X: 16 of K = 64).
enum class ScaleVec : std::uint8_t { X1 = 1, X2 = 2, X4 = 4 };

// 32-bit instruction descriptor.
struct InstrDescriptor {
  std::uint32_t raw = 0;
};

// Every field of the two descriptor layouts (PTX ISA "Instruction descriptor" tables; CUTLASS
// mma_sm100_desc.hpp InstrDescriptor / InstrDescriptorBlockScaled):
//   dense (f16, tf32, f8f6f4, i8): 0-1 sparsity selector, 2 sparse, 3 saturate, 4-5 D format
//     (0 f16, 1 f32, 2 s32), 7-9 A format, 10-12 B format, 13/14 negate A/B, 15/16 transpose A/B
//     (1 = MN-major), 17-22 N >> 3, 24-28 M >> 4, 30-31 .ws maximum B-reuse shift;
//   block-scaled (mxf8f6f4, mxf4, mxf4nvf4): 2 sparse, 4-5 B scale-factor ID, 7-9 A format,
//     10-12 B format (10-11 for mxf4*), 13/14 negate, 15/16 transpose, 17-22 N >> 3, 23 scale
//     type (0 ue4m3, 1 ue8m0), 27-28 M >> 7, 29-30 A scale-factor ID, 31 K = 96 (mxf4*, sm_103a).
// Format codes: f16 0 f16, 1 bf16; tf32 2; f8f6f4 / mxf8f6f4 0 e4m3, 1 e5m2, 3 e2m3, 4 e3m2,
// 5 e2m1; i8 0 u8, 1 s8; mxf4 / mxf4nvf4 1 e2m1 (packed two per byte).
struct InstrDescriptorFields {
  DataType a_type = DataType::BF16, b_type = DataType::BF16;
  DataType d_type = DataType::F32;
  Major a_major = Major::K, b_major = Major::K;
  bool negate_a = false, negate_b = false;
  bool saturate = false;
  bool sparse = false;
  std::uint32_t sparse_selector = 0;
  std::uint32_t m = 128, n = 256;
  std::uint32_t max_shift = 0;              // .ws: 0 none, 1 -> 8, 2 -> 16, 3 -> 32
  DataType scale_type = DataType::UE8M0;    // block-scaled: ue8m0 or ue4m3
  std::uint32_t a_sf_id = 0, b_sf_id = 0;   // block-scaled: byte of the scale-factor word
  bool k96 = false;                         // mxf4 / mxf4nvf4: K = 96 (sm_103a only)
};

// The descriptor for `kind` (the layout and format codes depend on it); throws InputError if a
// type is not one the kind takes.
InstrDescriptor encode(MmaKind kind, const InstrDescriptorFields& f);
// Decodes for `kind`; an error text naming the field for a reserved code or bit, a type or option
// the kind does not take, or a form bwsim does not model (f16 D, sparse block-scaled, sparsity
// selector 2-3, .ws shift, K = 96).
std::optional<std::string> decode(MmaKind kind, InstrDescriptor d, InstrDescriptorFields& out);

// K per instruction for the kind (dense; a sparse MMA's logical K is twice this, its A holding
// this many stored elements per row): 32 bytes of input, FP4 of kind::mxf4* packed two per
// byte, FP4/FP6 of kind::f8f6f4 in one byte each (PTX: 16 packed elements padded to 16 bytes).
std::uint32_t mma_k(MmaKind kind);

// Element (row, k) of an SMEM operand described by `f`, as the MMA of `kind` reads it: 8/16/32-bit
// elements at operand_address; kind::f8f6f4 FP6/FP4 as 16 packed elements (12 or 8 bytes, low
// bits first) at the start of each 16-byte K chunk; kind::mxf4* FP4 two per byte, the lower K
// in the low nibble. Returns the element's byte address and, for sub-byte elements, its bit
// offset (the value's bits then continue into the next byte for FP6).
struct OperandBits {
  std::uint32_t byte = 0, bit = 0;
};
OperandBits operand_bits(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t, std::uint32_t row,
                         std::uint32_t k);
// Bits of one element of type `t` as the MMA of `kind` reads it (4, 6, 8, 16 or 32).
std::uint32_t operand_element_bits(MmaKind kind, DataType t);
// The SMEM bytes one instruction's operand of `rows` rows can touch (its K of the kind, times
// `k_times`: 2 for the B operand of a sparse MMA, whose logical K is twice the stored K of A).
// The MMA path takes it through SmemOperandMemo::span; this is the reference the memo matches.
SmemSpan mma_operand_span(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t, std::uint32_t rows,
                          std::uint32_t k_times = 1);
SpanOffsets mma_operand_span_offsets(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t,
                                     std::uint32_t rows, std::uint32_t k_times = 1);

}  // namespace bwsim
