#include "bwsim/hw/numeric/DataType.hpp"

#include <array>

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
}  // namespace

std::uint32_t size_of(DataType t) { return info(t).bytes; }
std::string_view name_of(DataType t) { return info(t).name; }
bool is_floating(DataType t) { return info(t).floating; }

std::optional<DataType> parse_data_type(std::string_view name) {
  for (const auto& i : kTypes)
    if (i.name == name) return i.type;
  return std::nullopt;
}

}  // namespace bwsim
