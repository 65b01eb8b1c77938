#include "bwsim/hw/numeric/DataType.hpp"

#include <array>
#include <utility>

namespace bwsim {
namespace {
struct TypeInfo {
  DataType type;
  std::string_view name;
  std::uint32_t bytes;
  bool floating;
};
constexpr std::array<TypeInfo, 13> kTypes{{
    {DataType::U8, "u8", 1, false},     {DataType::U16, "u16", 2, false},  {DataType::U32, "u32", 4, false},
    {DataType::S32, "s32", 4, false},   {DataType::U64, "u64", 8, false},  {DataType::S64, "s64", 8, false},
    {DataType::F16, "f16", 2, true},    {DataType::BF16, "bf16", 2, true}, {DataType::F32, "f32", 4, true},
    {DataType::F64, "f64", 8, true},    {DataType::TF32, "tf32", 4, true}, {DataType::E4M3, "e4m3", 1, true},
    {DataType::E5M2, "e5m2", 1, true},
}};
const TypeInfo& info(DataType t) { return kTypes[static_cast<std::size_t>(t)]; }
// Other spellings: PyTorch's torch.<dtype> names and common short forms.
constexpr std::array<std::pair<std::string_view, DataType>, 21> kAliases{{
    {"uint8", DataType::U8},         {"uint16", DataType::U16},           {"uint32", DataType::U32},
    {"int32", DataType::S32},        {"uint64", DataType::U64},           {"int64", DataType::S64},
    {"fp16", DataType::F16},         {"float16", DataType::F16},          {"half", DataType::F16},
    {"bfloat16", DataType::BF16},    {"fp32", DataType::F32},             {"float32", DataType::F32},
    {"float", DataType::F32},        {"fp64", DataType::F64},             {"float64", DataType::F64},
    {"double", DataType::F64},       {"float8_e4m3fn", DataType::E4M3},   {"fp8_e4m3", DataType::E4M3},
    {"float8_e5m2", DataType::E5M2}, {"fp8_e5m2", DataType::E5M2},        {"tfloat32", DataType::TF32},
}};
}  // namespace

std::uint32_t size_of(DataType t) { return info(t).bytes; }
std::string_view name_of(DataType t) { return info(t).name; }
bool is_floating(DataType t) { return info(t).floating; }

std::optional<DataType> parse_data_type(std::string_view name) {
  for (const auto& i : kTypes)
    if (i.name == name) return i.type;
  for (const auto& [alias, type] : kAliases)
    if (alias == name) return type;
  return std::nullopt;
}

std::string data_type_names(std::initializer_list<DataType> types) {
  std::string text;
  for (const DataType t : types) {
    if (!text.empty()) text += ", ";
    text += name_of(t);
    std::string others;
    for (const auto& [alias, type] : kAliases)
      if (type == t) (others += others.empty() ? "" : ", ") += alias;
    if (!others.empty()) text += " (" + others + ")";
  }
  return text;
}

}  // namespace bwsim
