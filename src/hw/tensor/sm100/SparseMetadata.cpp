#include "bwsim/hw/tensor/sm100/SparseMetadata.hpp"

namespace bwsim {

SparseChunk sparse_chunk(MmaKind kind) {
  switch (kind) {
    case MmaKind::TF32: return {2, 1, 1};
    case MmaKind::MXF4:
    case MmaKind::MXF4NVF4: return {8, 4, 2};
    default: return {4, 2, 1};
  }
}

std::uint32_t sparse_metadata_columns(MmaKind kind) { return kind == MmaKind::F16 || kind == MmaKind::TF32 ? 1 : 2; }

MetadataNibble sparse_metadata_nibble(MmaKind kind, std::uint32_t row, std::uint32_t chunk) {
  if (kind == MmaKind::F16 || kind == MmaKind::TF32)
    return {{16 * (row / 16) + 8 * (chunk / 4) + row % 8, 0}, 16 * ((row % 16) / 8) + 4 * (chunk % 4)};
  return {{row, chunk / 8}, 4 * (chunk % 8)};
}

bool sparse_positions(MmaKind kind, std::uint32_t code, std::uint32_t (&pos)[4]) {
  if (kind == MmaKind::TF32) {
    if (code != 0b0100 && code != 0b1110) return false;
    pos[0] = code == 0b0100 ? 0 : 1;
    return true;
  }
  const std::uint32_t i0 = code & 3, i1 = code >> 2 & 3;
  if (i0 == i1) return false;
  const std::uint32_t g = sparse_chunk(kind).group;
  for (std::uint32_t e = 0; e < g; ++e) {
    pos[e] = i0 * g + e;
    pos[g + e] = i1 * g + e;
  }
  return true;
}

}  // namespace bwsim
