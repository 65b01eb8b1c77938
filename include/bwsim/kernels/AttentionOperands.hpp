#pragma once
// The SMEM operand forms the attention kernels (fmha, fmha_bwd) share. A 16-bit tile of 128 rows
// is TMA-loaded as head-dim chunks of 64 elements (one 128-byte swizzle row each), every chunk a
// 128 x 128-byte box of 16 KiB; the same bytes serve as a K-major operand (the head dim is the
// MMA's K) or an MN-major one (the head dim is M or N, the rows are K).
#include <cstdint>

#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"
#include "bwsim/kernel/Warp.hpp"

namespace bwsim::attention {

constexpr std::uint32_t kChunk = 64;                // elements per 128-byte swizzle row
constexpr std::uint32_t kTileRows = 128;            // rows of a tile (TMEM lanes)
constexpr std::uint32_t kChunkBytes = kTileRows * 128;  // one chunk of a tile: 16 KiB
constexpr std::uint32_t kAtom = 1024;               // 8 rows of 128 bytes: one swizzle atom

// K-major: the chunk at `chunk`, `within` bytes into its rows (the MMA's K slice).
inline SmemDescriptor k_major(SmemAddr chunk, std::uint32_t within) {
  return encode(SmemDescriptorFields{.start_address = chunk.offset + within, .leading_byte_offset = 16,
                                     .stride_byte_offset = kAtom, .layout = UmmaLayout::Swizzle128B});
}

// MN-major: the head dim (contiguous, 64 per chunk, chunks LBO apart) is M or N, the tile's rows
// are K (8-row groups SBO apart); `k0` the first row of the MMA.
inline SmemDescriptor mn_major(SmemAddr tile, std::uint32_t k0) {
  return encode(SmemDescriptorFields{.start_address = tile.offset + k0 / 8 * kAtom, .leading_byte_offset = kChunkBytes,
                                     .stride_byte_offset = kAtom, .layout = UmmaLayout::Swizzle128B});
}

}  // namespace bwsim::attention
