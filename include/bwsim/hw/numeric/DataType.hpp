#pragma once
// Element types of tensors in GMEM/SMEM (the TMA's and the MMA's view).
#include <cstdint>
#include <optional>
#include <string_view>

namespace bwsim {

enum class DataType : std::uint8_t { U8, U16, U32, S32, U64, S64, F16, BF16, F32, F64, TF32, E4M3, E5M2 };

std::uint32_t size_of(DataType t);
std::string_view name_of(DataType t);
std::optional<DataType> parse_data_type(std::string_view name);
bool is_floating(DataType t);

}  // namespace bwsim
