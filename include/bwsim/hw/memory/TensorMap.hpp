#pragma once
// The TMA tensor map (CUtensorMap, tiled mode), built on the host and validated as
// cuTensorMapEncodeTiled does. Immutable once built.
#include <array>
#include <cstdint>
#include <vector>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/hw/memory/GlobalMemory.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"

namespace bwsim {

enum class OobFill : std::uint8_t { Zero, NanRequestZeroFma };
// CUtensorMapL2promotion: a load that misses in the L2 fetches whole granules of this size from
// memory (the box's lines and their neighbours in the granule), so the next box along the row
// finds them resident.
enum class L2Promotion : std::uint8_t { None, B64, B128, B256 };
std::uint32_t promotion_bytes(L2Promotion p);  // 0, 64, 128, 256

inline constexpr std::uint32_t kMaxTensorRank = 5;

struct TensorMapSpec {
  DataType dtype = DataType::U8;
  GmemAddr address;
  std::vector<std::uint64_t> dims;          // elements, innermost first
  std::vector<std::uint64_t> strides;       // bytes, for dims 1..rank-1 (dim 0 is contiguous)
  std::vector<std::uint32_t> box;           // elements per dimension, 1..256
  std::vector<std::uint32_t> elem_strides;  // 1..8 per dimension; empty means all 1
  Swizzle swizzle = Swizzle::None;
  OobFill oob_fill = OobFill::Zero;
  L2Promotion l2_promotion = L2Promotion::None;
};

class TensorMap {
 public:
  // Validates and builds; throws InputError naming the offending field.
  static TensorMap tiled(const TensorMapSpec& spec);

  DataType dtype() const { return dtype_; }
  std::uint32_t rank() const { return rank_; }
  GmemAddr address() const { return address_; }
  std::uint64_t dim(std::uint32_t i) const { return dims_[i]; }
  std::uint64_t stride(std::uint32_t i) const { return strides_[i]; }  // bytes, for i >= 1
  std::uint32_t box(std::uint32_t i) const { return box_[i]; }
  std::uint32_t elem_stride(std::uint32_t i) const { return elem_strides_[i]; }
  Swizzle swizzle() const { return swizzle_; }
  OobFill oob_fill() const { return oob_fill_; }
  L2Promotion l2_promotion() const { return l2_promotion_; }

  // Elements one box transfers along dimension i: ceil(box / elementStride).
  std::uint32_t box_elems(std::uint32_t i) const { return (box_[i] + elem_strides_[i] - 1) / elem_strides_[i]; }
  // Bytes of the box's innermost row and of the whole box (what lands in SMEM, OOB included; a
  // packing's groups of 16 elements land as its SMEM group size).
  std::uint32_t row_bytes() const {
    const auto pk = tma_packing(dtype_);
    return pk ? box_elems(0) / 16 * pk->group_smem : box_elems(0) * size_of(dtype_);
  }
  // GMEM bytes of `elements` consecutive elements of the innermost dimension (a packing's 4 or 6
  // bits each; counts of whole groups for packings).
  std::uint64_t gmem_bytes(std::uint64_t elements) const { return elements * gmem_bits_of(dtype_) / 8; }
  std::uint32_t box_bytes() const { return box_bytes_; }
  // Bytes of GMEM the tensor spans (highest element's end minus the base address).
  std::uint64_t footprint_bytes() const;

 private:
  DataType dtype_ = DataType::U8;
  std::uint32_t rank_ = 0;
  GmemAddr address_;
  std::array<std::uint64_t, kMaxTensorRank> dims_{1, 1, 1, 1, 1};
  std::array<std::uint64_t, kMaxTensorRank> strides_{};
  std::array<std::uint32_t, kMaxTensorRank> box_{1, 1, 1, 1, 1};
  std::array<std::uint32_t, kMaxTensorRank> elem_strides_{1, 1, 1, 1, 1};
  Swizzle swizzle_ = Swizzle::None;
  OobFill oob_fill_ = OobFill::Zero;
  L2Promotion l2_promotion_ = L2Promotion::None;
  std::uint32_t box_bytes_ = 0;
};

// Box coordinates (elements, innermost first); negative and past-the-end values are legal
// and select OOB fill / clipping.
struct TensorCoords {
  std::array<std::int32_t, kMaxTensorRank> c{};
  TensorCoords() = default;
  TensorCoords(std::initializer_list<std::int32_t> list) {
    std::size_t i = 0;
    for (auto v : list) c[i++] = v;
  }
  std::int32_t operator[](std::size_t i) const { return c[i]; }
};

}  // namespace bwsim
