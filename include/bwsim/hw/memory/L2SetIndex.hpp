#pragma once
// Which set of a set-associative L2 half a block lives in (hw/memory/L2SetAssociative): a function
// of its address. Two ways to read that address, chosen by l2.page_bytes:
//  - 0: as physical. The line address is folded onto the set bits by XOR, so a run of consecutive
//    lines fills every set evenly and lines a power of two apart still spread.
//  - a page size (2 MiB on Hopper): GMEM is mapped in pages whose physical frames the driver
//    scatters, and the L2 hashes physical addresses. Within a page the hash is linear and even;
//    which sets a part of a page lands on depends on its frame, which the model draws from the
//    page number with a fixed mixing function. So a footprint of whole pages fills the sets evenly
//    (silicon's sharp knee for a cyclic footprint), while windows of a few boxes in many pages (the
//    lag rows' streams) overlap in some sets and not others, and the L2 loses them gradually, as
//    on silicon (README, "Pages scatter over the L2's sets").
// The model tracks blocks of l2.block_rows rows, so a block's address has zero row bits where
// a line's would not: the in-page hash is chosen so that a page's blocks still cover every set
// evenly for every power-of-two row pitch (otherwise a GEMM tile with 8 KiB rows fills an eighth of
// the sets of each page).
#include <cstdint>
#include <vector>

namespace bwsim {

class L2SetIndex {
 public:
  // 2^set_bits sets; pages of page_bytes / line_bytes lines; blocks of block_rows rows.
  // Throws ConfigError when page_bytes leaves too few in-page bits above the set bits for blocks
  // to reach every set, or when no in-page map found reaches every set.
  L2SetIndex(std::uint32_t set_bits, std::uint32_t line_bytes, std::uint32_t block_rows, std::uint64_t page_bytes);

  // The set of the block whose first line is `line` (its GMEM address over l2.line_bytes).
  std::uint64_t operator()(std::uint64_t line) const;

 private:
  std::uint64_t folded(std::uint64_t line) const;
  std::uint64_t scattered(std::uint64_t line) const;

  std::uint32_t set_bits_;
  std::uint32_t page_line_bits_ = 0;    // log2(lines per page); 0: addresses are physical
  std::vector<std::uint32_t> columns_;  // the set bits each in-page bit above the set bits flips
};

}  // namespace bwsim
