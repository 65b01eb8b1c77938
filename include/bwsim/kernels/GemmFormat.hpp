#pragma once
// The A/B operand formats of the tcgen05 GEMM (--dtype): the MMA kind and element type each runs
// on, the TMA data type A and B have in GMEM, and the block scales of the block-scaled kinds, as
// CUTLASS's SM100 GEMMs use them (FP4 of kind::f8f6f4 unpacked to 16-byte SMEM chunks by TMA
// 16U4_ALIGN16B; kind::mxf4* FP4 packed two per byte, 16U4_ALIGN8B).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {

struct GemmFormat {
  std::string_view name;
  MmaKind kind;
  DataType element;                // as the MMA reads it
  DataType gmem;                   // A/B's TMA data type
  DataType scale = DataType::U8;   // ue8m0 / ue4m3 block scales; U8: none
  std::uint32_t scale_block = 0;   // elements of K per scale factor
  ScaleVec vec = ScaleVec::X1;     // factors per row per MMA
  std::string_view help;

  bool block_scaled() const { return scale_block != 0; }
  bool packed() const { return tma_packing(gmem).has_value(); }  // A/B rows packed sub-byte in GMEM
  // SMEM bits per element: 4 for kind::mxf4* FP4 (two per byte), 8 for kind::f8f6f4 FP6/FP4 (16
  // packed elements padded to 16 bytes), the element's size otherwise.
  std::uint32_t smem_bits() const { return is_block_scaled(kind) && kind != MmaKind::MXF8F6F4 ? 4 : 8 * size_of(element); }
  // The accumulator / D element type kind::i8 needs (s32), or f32 for the float kinds.
  DataType accumulator() const { return kind == MmaKind::I8 ? DataType::S32 : DataType::F32; }
};

std::span<const GemmFormat> gemm_formats();
// The format named `name`; throws InputError listing the names.
const GemmFormat& gemm_format(std::string_view name);
// "bf16, f16, ..." with each format's help, for --dtype's help text.
std::string gemm_format_names();

}  // namespace bwsim
