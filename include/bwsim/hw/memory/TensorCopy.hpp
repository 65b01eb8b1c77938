#pragma once
// Functional data movement of one TMA box between GMEM and SMEM: the tensor map's strides,
// element strides, swizzle, OOB fill on loads and clipping on stores.
#include <cstddef>
#include <span>

#include "bwsim/hw/memory/GlobalMemory.hpp"
#include "bwsim/hw/memory/TensorMap.hpp"

namespace bwsim {

// Writes the box at `coords` into `smem` (box_bytes() long, atom-aligned), filling elements
// outside the tensor per the map's OOB fill.
void copy_box_to_smem(const TensorMap& map, const TensorCoords& coords, GlobalMemory& gmem, std::span<std::byte> smem);

// How a box reaches GMEM: written (cp.async.bulk.tensor) or added element-wise to what is there
// (cp.reduce.async.bulk.tensor .add; f32 only, each add rounded to nearest even as an FADD).
enum class GmemWrite : std::uint8_t { Copy, AddF32 };

// Writes (or adds) the in-bounds elements of the box at `coords` from `smem` to GMEM; the rest is
// clipped.
void copy_box_to_gmem(const TensorMap& map, const TensorCoords& coords, std::span<const std::byte> smem,
                      GlobalMemory& gmem, GmemWrite how = GmemWrite::Copy);

// Number of box elements that fall inside the tensor (what a store writes).
std::uint64_t in_bounds_elements(const TensorMap& map, const TensorCoords& coords);

}  // namespace bwsim
