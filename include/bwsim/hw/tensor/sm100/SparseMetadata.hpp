#pragma once
// The sparsity metadata of tcgen05.mma.sp (PTX ISA "Sparse matrices"): A holds, per row, the
// non-zero half of each chunk of its logical K, and a 4-bit code per chunk in TMEM says where they
// go. Chunks and codes:
//   - kind::tf32, 1:2: chunks of 2 elements, one stored; 0b0100 = element 0, 0b1110 = element 1;
//   - kind::f16, f8f6f4, i8 (and mxf8f6f4), 2:4: chunks of 4, two stored; bits 1-0 the index of
//     the first stored element, bits 3-2 of the second;
//   - kind::mxf4, mxf4nvf4, 4:8 in pairs: chunks of 8, two stored pairs; the indices name pairs.
// Where a code lives for M = 128 rows per CTA (PTX gives this only in figures; CUTLASS tmem_e_frg
// and JAX's format_tcgen05_sparse_metadata, which agree, are read here):
//   - f16 / tf32: one column per instruction (the metadata address's column plus the descriptor's
//     sparsity selector); row r, chunk g (of 8): lane 16 (r / 16) + 8 (g / 4) + r % 8, bits
//     16 ((r % 16) / 8) + 4 (g % 4);
//   - 8-bit and FP4 kinds: two columns per instruction; lane r, chunk g (of 16): column g / 8,
//     bits 4 (g % 8).
#include <cstdint>

#include "bwsim/hw/tensor/sm100/TmemAccess.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {

struct SparseChunk {
  std::uint32_t elements;  // logical elements per chunk
  std::uint32_t stored;    // of those, held in A
  std::uint32_t group;     // elements an index names (2 for the FP4 kinds' pairs, else 1)
};
SparseChunk sparse_chunk(MmaKind kind);

// The cell and bit offset of the code of chunk g of row r, relative to the instruction's
// metadata column (address column + selector).
struct MetadataNibble {
  TmemCell cell;
  std::uint32_t bit;
};
MetadataNibble sparse_metadata_nibble(MmaKind kind, std::uint32_t row, std::uint32_t chunk);
// Columns one instruction's metadata takes.
std::uint32_t sparse_metadata_columns(MmaKind kind);

// The chunk positions of the stored elements (in order) for `code`; false where PTX leaves the
// code undefined (tf32 other than 0b0100 / 0b1110; two equal indices).
bool sparse_positions(MmaKind kind, std::uint32_t code, std::uint32_t (&pos)[4]);

}  // namespace bwsim
