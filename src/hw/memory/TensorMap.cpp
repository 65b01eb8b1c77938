#include "bwsim/hw/memory/TensorMap.hpp"

#include <fmt/format.h>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {
[[noreturn]] void bad(const std::string& what) { throw InputError("tensor map: " + what); }
}  // namespace

std::string_view name_of(Swizzle s) {
  switch (s) {
    case Swizzle::None: return "none";
    case Swizzle::B32: return "32B";
    case Swizzle::B64: return "64B";
    case Swizzle::B128: return "128B";
  }
  return "?";
}

std::optional<Swizzle> parse_swizzle(std::string_view n) {
  if (n == "none") return Swizzle::None;
  if (n == "32B" || n == "32") return Swizzle::B32;
  if (n == "64B" || n == "64") return Swizzle::B64;
  if (n == "128B" || n == "128") return Swizzle::B128;
  return std::nullopt;
}

TensorMap TensorMap::tiled(const TensorMapSpec& s) {
  const auto rank = static_cast<std::uint32_t>(s.dims.size());
  if (rank < 1 || rank > kMaxTensorRank) bad(fmt::format("rank {} is outside 1..5", rank));
  if (s.strides.size() != rank - 1)
    bad(fmt::format("{} global strides given, a rank-{} tensor needs {}", s.strides.size(), rank, rank - 1));
  if (s.box.size() != rank) bad(fmt::format("{} box dimensions given, rank is {}", s.box.size(), rank));
  if (!s.elem_strides.empty() && s.elem_strides.size() != rank)
    bad(fmt::format("{} element strides given, rank is {}", s.elem_strides.size(), rank));
  if (s.address.value % 16 != 0) bad(fmt::format("global address {:#x} is not 16-byte aligned", s.address.value));

  TensorMap m;
  m.dtype_ = s.dtype;
  m.rank_ = rank;
  m.address_ = s.address;
  m.swizzle_ = s.swizzle;
  m.oob_fill_ = s.oob_fill;
  m.l2_promotion_ = s.l2_promotion;
  const std::uint64_t elem = size_of(s.dtype);
  m.strides_[0] = elem;
  const auto packing = tma_packing(s.dtype);
  if (packing) {
    // The packed types move whole groups of 16 elements (bwsim asks the same of the tensor's rows).
    if (s.dims[0] % 16 != 0 || s.box[0] % 16 != 0)
      bad(fmt::format("{} moves groups of 16 elements: the innermost dimension ({}) and box extent ({}) must be "
                      "multiples of 16",
                      name_of(s.dtype), s.dims[0], s.box[0]));
    for (std::uint32_t es : s.elem_strides)
      if (es != 1) bad(fmt::format("{} takes no element strides", name_of(s.dtype)));
  }
  for (std::uint32_t i = 0; i < rank; ++i) {
    if (s.dims[i] < 1 || s.dims[i] > (1ull << 32))
      bad(fmt::format("global dimension {} is {}, must be in 1..2^32", i, s.dims[i]));
    m.dims_[i] = s.dims[i];
    if (s.box[i] < 1 || s.box[i] > 256) bad(fmt::format("box dimension {} is {}, must be in 1..256", i, s.box[i]));
    m.box_[i] = s.box[i];
    const std::uint32_t es = s.elem_strides.empty() ? 1 : s.elem_strides[i];
    if (es < 1 || es > 8) bad(fmt::format("element stride {} is {}, must be in 1..8", i, es));
    m.elem_strides_[i] = es;
  }
  for (std::uint32_t i = 1; i < rank; ++i) {
    const std::uint64_t st = s.strides[i - 1];
    if (st % 16 != 0) bad(fmt::format("global stride of dimension {} is {} bytes, not a multiple of 16", i, st));
    if (st >= (1ull << 40)) bad(fmt::format("global stride of dimension {} is {} bytes, must be < 2^40", i, st));
    const std::uint64_t extent = i == 1 ? m.gmem_bytes(m.dims_[0]) : m.dims_[i - 1] * m.strides_[i - 1];
    if (st < extent)
      bad(fmt::format("global stride of dimension {} ({} bytes) is smaller than dimension {}'s extent ({} bytes)", i,
                      st, i - 1, extent));
    m.strides_[i] = st;
  }
  const std::uint32_t row = m.row_bytes();
  if (row % 16 != 0) bad(fmt::format("innermost box extent is {} bytes, must be a multiple of 16", row));
  const std::uint32_t span = swizzle_span(s.swizzle);
  if (span != 0 && row > span)
    bad(fmt::format("innermost box extent is {} bytes, exceeds the {} swizzle span of {} bytes", row,
                    name_of(s.swizzle), span));
  if (s.oob_fill == OobFill::NanRequestZeroFma && !is_floating(s.dtype))
    bad(fmt::format("OOB fill NaN_REQUEST_ZERO_FMA needs a floating-point type, not {}", name_of(s.dtype)));
  std::uint64_t bytes = row;
  for (std::uint32_t i = 1; i < rank; ++i) bytes *= m.box_elems(i);
  m.box_bytes_ = static_cast<std::uint32_t>(bytes);
  return m;
}

std::uint32_t promotion_bytes(L2Promotion p) {
  switch (p) {
    case L2Promotion::None: return 0;
    case L2Promotion::B64: return 64;
    case L2Promotion::B128: return 128;
    case L2Promotion::B256: return 256;
  }
  return 0;
}

std::uint64_t TensorMap::footprint_bytes() const {
  std::uint64_t end = 0;
  for (std::uint32_t i = 1; i < rank_; ++i) end += (dims_[i] - 1) * strides_[i];
  return end + gmem_bytes(dims_[0]);
}

}  // namespace bwsim
