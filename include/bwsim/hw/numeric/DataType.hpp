#pragma once
// Element types of tensors in GMEM/SMEM (the TMA's and the MMA's view). The FP6/FP4 element types
// (e2m3, e3m2, e2m1) name one element in an 8-bit container, its value in the low bits, as the
// MMA's unpacked SMEM form and registers hold them; the three TMA packings name how such elements
// lie packed in GMEM (CUtensorMapDataType 16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B: groups of 16
// 4- or 6-bit elements, 8 or 12 bytes, landing in SMEM as 8 or 16 bytes).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace bwsim {

enum class DataType : std::uint8_t {
  U8, U16, U32, S32, U64, S64, F16, BF16, F32, F64, TF32, E4M3, E5M2,
  S8, E2M3, E3M2, E2M1, UE8M0, UE4M3,          // int8, FP6, FP4 and the block-scale factor formats
  U4x16Align8B, U4x16Align16B, U6x16Align16B,  // TMA packings of FP4 / FP6 elements
};

// Bytes of one element (a packing's: of its 8-bit container in SMEM).
std::uint32_t size_of(DataType t);
// Bits one element occupies in GMEM: 4 or 6 for the packings, 8 * size_of otherwise.
std::uint32_t gmem_bits_of(DataType t);
// A TMA packing: elements move in groups of 16, `group_gmem` bytes in GMEM, `group_smem` in SMEM.
struct TmaPacking {
  std::uint32_t group_gmem = 0, group_smem = 0;
};
std::optional<TmaPacking> tma_packing(DataType t);
std::string_view name_of(DataType t);
// A type by its name ("bf16") or by another spelling users type elsewhere: PyTorch's dtype names
// ("bfloat16", "float8_e4m3fn") and common short forms ("fp16", "half").
std::optional<DataType> parse_data_type(std::string_view name);
// The types' names with their other spellings, for help text: "bf16 (bfloat16), f16 (fp16, ...)".
std::string data_type_names(std::initializer_list<DataType> types);
bool is_floating(DataType t);

}  // namespace bwsim
