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
constexpr std::array<TypeInfo, 22> kTypes{{
    {DataType::U8, "u8", 1, false},     {DataType::U16, "u16", 2, false},  {DataType::U32, "u32", 4, false},
    {DataType::S32, "s32", 4, false},   {DataType::U64, "u64", 8, false},  {DataType::S64, "s64", 8, false},
    {DataType::F16, "f16", 2, true},    {DataType::BF16, "bf16", 2, true}, {DataType::F32, "f32", 4, true},
    {DataType::F64, "f64", 8, true},    {DataType::TF32, "tf32", 4, true}, {DataType::E4M3, "e4m3", 1, true},
    {DataType::E5M2, "e5m2", 1, true},  {DataType::S8, "s8", 1, false},    {DataType::E2M3, "e2m3", 1, true},
    {DataType::E3M2, "e3m2", 1, true},  {DataType::E2M1, "e2m1", 1, true},  {DataType::UE8M0, "ue8m0", 1, true},
    {DataType::UE4M3, "ue4m3", 1, true}, {DataType::U4x16Align8B, "16u4_align8b", 1, false},
    {DataType::U4x16Align16B, "16u4_align16b", 1, false}, {DataType::U6x16Align16B, "16u6_align16b", 1, false},
}};
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kTypes.size(); ++i)
    if (static_cast<std::size_t>(kTypes[i].type) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kTypes is indexed by DataType");
const TypeInfo& info(DataType t) { return kTypes[static_cast<std::size_t>(t)]; }
// Other spellings: PyTorch's torch.<dtype> names and common short forms.
constexpr std::array<std::pair<std::string_view, DataType>, 25> kAliases{{
    {"uint8", DataType::U8},         {"uint16", DataType::U16},           {"uint32", DataType::U32},
    {"int32", DataType::S32},        {"uint64", DataType::U64},           {"int64", DataType::S64},
    {"fp16", DataType::F16},         {"float16", DataType::F16},          {"half", DataType::F16},
    {"bfloat16", DataType::BF16},    {"fp32", DataType::F32},             {"float32", DataType::F32},
    {"float", DataType::F32},        {"fp64", DataType::F64},             {"float64", DataType::F64},
    {"double", DataType::F64},       {"float8_e4m3fn", DataType::E4M3},   {"fp8_e4m3", DataType::E4M3},
    {"float8_e5m2", DataType::E5M2}, {"fp8_e5m2", DataType::E5M2},        {"tfloat32", DataType::TF32},
    {"int8", DataType::S8},          {"fp4", DataType::E2M1},
    {"float8_e8m0fnu", DataType::UE8M0}, {"fp6_e2m3", DataType::E2M3},
}};
}  // namespace

std::uint32_t size_of(DataType t) { return info(t).bytes; }

std::uint32_t gmem_bits_of(DataType t) {
  switch (t) {
    case DataType::U4x16Align8B:
    case DataType::U4x16Align16B: return 4;
    case DataType::U6x16Align16B: return 6;
    default: return 8 * size_of(t);
  }
}

std::optional<TmaPacking> tma_packing(DataType t) {
  switch (t) {
    case DataType::U4x16Align8B: return TmaPacking{8, 8};
    case DataType::U4x16Align16B: return TmaPacking{8, 16};
    case DataType::U6x16Align16B: return TmaPacking{12, 16};
    default: return std::nullopt;
  }
}
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
