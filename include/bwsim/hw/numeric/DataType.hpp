#pragma once
// Element types of tensors in GMEM/SMEM (the TMA's and the MMA's view).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace bwsim {

enum class DataType : std::uint8_t { U8, U16, U32, S32, U64, S64, F16, BF16, F32, F64, TF32, E4M3, E5M2 };

std::uint32_t size_of(DataType t);
std::string_view name_of(DataType t);
// A type by its name ("bf16") or by another spelling users type elsewhere: PyTorch's dtype names
// ("bfloat16", "float8_e4m3fn") and common short forms ("fp16", "half").
std::optional<DataType> parse_data_type(std::string_view name);
// The types' names with their other spellings, for help text: "bf16 (bfloat16), f16 (fp16, ...)".
std::string data_type_names(std::initializer_list<DataType> types);
bool is_floating(DataType t);

}  // namespace bwsim
