#include "bwsim/hw/memory/TensorCopy.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace bwsim {
namespace {

// Canonical quiet NaN of each floating type, little-endian, for OobFill::NanRequestZeroFma.
void fill_element(const TensorMap& map, std::byte* dst) {
  const std::uint32_t n = size_of(map.dtype());
  if (map.oob_fill() == OobFill::Zero) {
    std::memset(dst, 0, n);
    return;
  }
  std::uint64_t nan = 0;
  switch (map.dtype()) {
    case DataType::F16: nan = 0x7fff; break;
    case DataType::BF16: nan = 0x7fff; break;
    case DataType::F32:
    case DataType::TF32: nan = 0x7fffffff; break;
    case DataType::F64: nan = 0x7fffffffffffffffull; break;
    case DataType::E4M3: nan = 0x7f; break;
    case DataType::E5M2: nan = 0x7f; break;
    default: break;
  }
  std::memcpy(dst, &nan, n);
}

// The box indices i of dimension d whose element is inside the tensor, 0 <= c_d + i*es_d < dim_d:
// the range [lo, hi) (empty: lo == hi).
std::pair<std::int64_t, std::int64_t> in_bounds_range(const TensorMap& map, const TensorCoords& c, std::uint32_t d) {
  const std::int64_t c0 = c[d], es = map.elem_stride(d), dim = static_cast<std::int64_t>(map.dim(d));
  std::int64_t lo = 0, hi = map.box_elems(d);
  if (c0 < 0) lo = (-c0 + es - 1) / es;
  if (c0 + (hi - 1) * es >= dim) hi = dim - c0 <= 0 ? 0 : (dim - c0 + es - 1) / es;
  return {std::min(lo, hi), hi};
}

// Visits every row (all dims but the innermost) of the box: calls fn(row_index, gmem offset of
// the row's first element or -1 if the row lies outside the tensor, [lo, hi) in-bounds range of
// the innermost box index).
template <class Fn>
void for_each_row(const TensorMap& map, const TensorCoords& c, Fn&& fn) {
  std::array<std::uint32_t, kMaxTensorRank> n{};
  for (std::uint32_t d = 0; d < kMaxTensorRank; ++d) n[d] = d < map.rank() ? map.box_elems(d) : 1;
  const std::int64_t c0 = c[0];
  const auto [lo, hi] = in_bounds_range(map, c, 0);
  std::uint64_t row = 0;
  for (std::uint32_t i4 = 0; i4 < n[4]; ++i4)
    for (std::uint32_t i3 = 0; i3 < n[3]; ++i3)
      for (std::uint32_t i2 = 0; i2 < n[2]; ++i2)
        for (std::uint32_t i1 = 0; i1 < n[1]; ++i1, ++row) {
          const std::array<std::uint32_t, kMaxTensorRank> idx{0, i1, i2, i3, i4};
          std::int64_t off = 0;
          bool inside = true;
          for (std::uint32_t d = 1; d < map.rank(); ++d) {
            const std::int64_t g = static_cast<std::int64_t>(c[d]) + static_cast<std::int64_t>(idx[d]) * map.elem_stride(d);
            if (g < 0 || g >= static_cast<std::int64_t>(map.dim(d))) inside = false;
            off += g * static_cast<std::int64_t>(map.stride(d));
          }
          off += c0 * static_cast<std::int64_t>(gmem_bits_of(map.dtype())) / 8;
          fn(row, inside && lo < hi ? off : -1, lo, hi);
        }
}

// A packed type's row: each in-bounds group of 16 elements moves its GMEM bytes to the start of
// its SMEM slot; the slot's padding and the groups outside the tensor are zero. `to_smem` false
// moves the in-bounds groups back.
void move_packed_row(const TensorMap& map, TmaPacking pk, GlobalMemory& gmem, std::uint64_t first, std::int64_t lo,
                     std::int64_t hi, std::byte* row, bool to_smem) {
  if (to_smem) std::memset(row, 0, map.row_bytes());
  for (std::int64_t g = lo / 16; g < hi / 16; ++g) {
    auto bytes = gmem.bytes(GmemAddr{first + static_cast<std::uint64_t>(g - lo / 16) * pk.group_gmem}, pk.group_gmem);
    if (to_smem)
      std::memcpy(&row[g * pk.group_smem], bytes.data(), pk.group_gmem);
    else
      std::memcpy(bytes.data(), &row[g * pk.group_smem], pk.group_gmem);
  }
}

}  // namespace

void copy_box_to_smem(const TensorMap& map, const TensorCoords& c, GlobalMemory& gmem, std::span<std::byte> smem) {
  const std::uint32_t elem = size_of(map.dtype());
  const auto packing = tma_packing(map.dtype());
  const std::uint32_t row_bytes = map.row_bytes();
  const std::int64_t es0 = map.elem_stride(0);
  std::array<std::byte, 256 * 8> buf;  // one box row, before swizzling
  for_each_row(map, c, [&](std::uint64_t row, std::int64_t goff, std::int64_t lo, std::int64_t hi) {
    if (goff < 0) lo = hi = 0;
    if (packing) {
      move_packed_row(map, *packing, gmem, map.address().value + goff + map.gmem_bytes(lo), lo, hi, buf.data(), true);
    } else {
      for (std::int64_t i = 0; i < lo; ++i) fill_element(map, &buf[i * elem]);
      for (std::int64_t i = hi; i < map.box_elems(0); ++i) fill_element(map, &buf[i * elem]);
    }
    if (!packing && hi > lo) {
      const std::uint64_t first = map.address().value + goff + lo * es0 * elem;
      if (es0 == 1) {
        auto src = gmem.bytes(GmemAddr{first}, (hi - lo) * elem);
        std::memcpy(&buf[lo * elem], src.data(), src.size());
      } else {
        for (std::int64_t i = lo; i < hi; ++i) {
          auto src = gmem.bytes(GmemAddr{first + (i - lo) * es0 * elem}, elem);
          std::memcpy(&buf[i * elem], src.data(), elem);
        }
      }
    }
    const std::uint32_t base = static_cast<std::uint32_t>(row * row_bytes);
    for (std::uint32_t k = 0; k < row_bytes; k += 16)
      std::memcpy(&smem[swizzle_offset(map.swizzle(), base + k)], &buf[k], 16);
  });
}

void copy_box_to_gmem(const TensorMap& map, const TensorCoords& c, std::span<const std::byte> smem, GlobalMemory& gmem,
                      GmemWrite how) {
  const std::uint32_t elem = size_of(map.dtype());
  const std::uint32_t row_bytes = map.row_bytes();
  const std::int64_t es0 = map.elem_stride(0);
  std::array<std::byte, 256 * 8> buf;
  for_each_row(map, c, [&](std::uint64_t row, std::int64_t goff, std::int64_t lo, std::int64_t hi) {
    if (goff < 0) return;
    const std::uint32_t base = static_cast<std::uint32_t>(row * row_bytes);
    for (std::uint32_t k = 0; k < row_bytes; k += 16)
      std::memcpy(&buf[k], &smem[swizzle_offset(map.swizzle(), base + k)], 16);
    if (const auto packing = tma_packing(map.dtype())) {
      move_packed_row(map, *packing, gmem, map.address().value + goff + map.gmem_bytes(lo), lo, hi, buf.data(), false);
      return;
    }
    const std::uint64_t first = map.address().value + goff + lo * es0 * elem;
    for (std::int64_t i = lo; i < hi; i += (es0 == 1 ? hi - lo : 1)) {
      const std::int64_t count = es0 == 1 ? hi - lo : 1;
      auto dst = gmem.bytes(GmemAddr{first + (i - lo) * es0 * elem}, count * elem);
      if (how == GmemWrite::Copy) {
        std::memcpy(dst.data(), &buf[i * elem], count * elem);
        continue;
      }
      for (std::int64_t e = 0; e < count; ++e) {  // AddF32 (the caller checked the type)
        float sum, add;
        std::memcpy(&sum, &dst[e * 4], 4);
        std::memcpy(&add, &buf[(i + e) * 4], 4);
        sum += add;
        std::memcpy(&dst[e * 4], &sum, 4);
      }
    }
  });
}

// The in-bounds elements form a product of one index range per dimension.
std::uint64_t in_bounds_elements(const TensorMap& map, const TensorCoords& c) {
  std::uint64_t total = 1;
  for (std::uint32_t d = 0; d < map.rank(); ++d) {
    const auto [lo, hi] = in_bounds_range(map, c, d);
    total *= static_cast<std::uint64_t>(hi - lo);
  }
  return total;
}

}  // namespace bwsim
