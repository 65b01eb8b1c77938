#include "bwsim/kernels/GemmFormat.hpp"

#include <fmt/format.h>

#include <array>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {
// The names follow the element type for the unscaled kinds and the usual format names (MXFP8,
// MXFP4, NVFP4: OCP MX v1.0 and NVIDIA's FP4 with ue4m3 factors per 16) for the block-scaled ones.
constexpr std::array<GemmFormat, 10> kFormats{{
    {"bf16", MmaKind::F16, DataType::BF16, DataType::BF16, DataType::U8, 0, ScaleVec::X1, "kind::f16"},
    {"f16", MmaKind::F16, DataType::F16, DataType::F16, DataType::U8, 0, ScaleVec::X1, "kind::f16"},
    {"tf32", MmaKind::TF32, DataType::TF32, DataType::F32, DataType::U8, 0, ScaleVec::X1,
     "kind::tf32 on fp32 data (the low 13 mantissa bits are not read)"},
    {"e4m3", MmaKind::F8F6F4, DataType::E4M3, DataType::E4M3, DataType::U8, 0, ScaleVec::X1, "kind::f8f6f4"},
    {"e5m2", MmaKind::F8F6F4, DataType::E5M2, DataType::E5M2, DataType::U8, 0, ScaleVec::X1, "kind::f8f6f4"},
    {"e2m1", MmaKind::F8F6F4, DataType::E2M1, DataType::U4x16Align16B, DataType::U8, 0, ScaleVec::X1,
     "kind::f8f6f4 FP4, unscaled (packed in GMEM, 16U4_ALIGN16B into padded SMEM chunks)"},
    {"s8", MmaKind::I8, DataType::S8, DataType::S8, DataType::U8, 0, ScaleVec::X1, "kind::i8, s32 accumulate"},
    {"mxf8", MmaKind::MXF8F6F4, DataType::E4M3, DataType::E4M3, DataType::UE8M0, 32, ScaleVec::X1,
     "MXFP8: kind::mxf8f6f4 e4m3, ue8m0 per 32"},
    {"mxf4", MmaKind::MXF4, DataType::E2M1, DataType::U4x16Align8B, DataType::UE8M0, 32, ScaleVec::X2,
     "MXFP4: kind::mxf4 e2m1, ue8m0 per 32"},
    {"nvfp4", MmaKind::MXF4NVF4, DataType::E2M1, DataType::U4x16Align8B, DataType::UE4M3, 16, ScaleVec::X4,
     "NVFP4: kind::mxf4nvf4 e2m1, ue4m3 per 16"},
}};
}  // namespace

std::span<const GemmFormat> gemm_formats() { return kFormats; }

const GemmFormat& gemm_format(std::string_view name) {
  for (const GemmFormat& f : kFormats)
    if (f.name == name) return f;
  // Other spellings of the unscaled element types ("bfloat16", "fp16", ...) name the same format.
  if (const auto t = parse_data_type(name))
    for (const GemmFormat& f : kFormats)
      if (!f.block_scaled() && f.element == *t) return f;
  throw InputError(fmt::format("--dtype {}: the GEMM takes {}", name, gemm_format_names()));
}

std::string gemm_format_names() {
  std::string text;
  for (const GemmFormat& f : kFormats)  // the unscaled ones with their element type's other spellings
    text += fmt::format("{}{} [{}]", text.empty() ? "" : ", ",
                        f.block_scaled() ? std::string(f.name) : data_type_names({f.element}), f.help);
  return text;
}

}  // namespace bwsim
