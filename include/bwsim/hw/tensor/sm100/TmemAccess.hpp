#pragma once
// The thread/register <-> TMEM (lane, column) maps of tcgen05.ld / tcgen05.st (PTX ISA "Matrix
// fragments for tcgen05.ld/st"; CUTLASS copy_traits_sm100.hpp SM100_TMEM_LOAD_* layouts agree):
//   32x32b    thread t: lane t, column r
//   16x64b    thread t: lane t/4 + 8*(t%2), column (t/2)%2 + 2*r
//   16x128b   thread t: lane t/4 + 8*(r%2), column t%4 + 4*(r/2)
//   16x256b   thread t: lane t/4 + 8*((r/2)%2), column 2*(t%4) + r%2 + 8*(r/4)
//   16x32bx2  thread t: lane t%16, column r + (t/16)*half_split
// for register r of the thread (.num repetitions continue the column pattern). With .pack::16b
// (ld) / .unpack::16b (st) the register count stays and each register holds the low 16 bits of
// two adjacent columns 2c, 2c+1 (2c in its low half): the pattern's column c names a column pair,
// so the access spans twice the columns (CUTLASS SM100_TMEM_LOAD_*_16b: 16x256b.x1.pack::16b
// fills 4 registers from 16 columns).
#include <cstdint>

namespace bwsim {

enum class TmemShape : std::uint8_t { S32x32b, S16x64b, S16x128b, S16x256b, S16x32bx2 };

struct TmemCell {
  std::uint32_t lane = 0;    // relative to the address's lane
  std::uint32_t column = 0;  // 32-bit column relative to the address's column (a pair's first with pack16)
};

// Registers per thread for `num` repetitions; 0 if num is not a power of 2 in 1..128 or the
// access would exceed 128 registers per thread.
std::uint32_t tmem_regs_per_thread(TmemShape shape, std::uint32_t num);
// Lanes the access spans (32 or 16) and the 32-bit columns it spans (doubled by pack16; the
// 16x32bx2 half-split offset not included).
std::uint32_t tmem_lanes(TmemShape shape);
std::uint32_t tmem_columns(TmemShape shape, std::uint32_t num, bool pack16);
// Where register `reg` of thread `thread` lives, in unpacked 32-bit register terms.
TmemCell tmem_cell(TmemShape shape, std::uint32_t thread, std::uint32_t reg, std::uint32_t half_split);
const char* name_of(TmemShape shape);

// tcgen05.cp SMEM -> TMEM shapes (rows x bits per row, with the warp-multicast qualifiers). The
// source is a K-major canonical layout whose "rows" are the strided dimension; bits 32j..32j+31 of
// row r land in column j of the address's column. Rows to lanes (relative to the address's lane;
// PTX gives the shapes and the multicast pairs, CUTLASS copy_traits_sm100 SM100_UTCCP_* the order):
//   128x256b, 128x128b      row r -> lane r
//   4x256b                  row r -> lane 32r (one lane per quadrant)
//   64x128b.warpx2::02_13   row r -> lanes r, r + 64 (rows 0-31 in quadrants 0 and 2, 32-63 in 1 and 3)
//   64x128b.warpx2::01_23   row r < 32 -> lanes r, r + 32; row r >= 32 -> lanes r + 32, r + 64
//   32x128b.warpx4          row r -> lanes r, r + 32, r + 64, r + 96
enum class TmemCopyShape : std::uint8_t { S128x256b, S128x128b, S4x256b, S64x128bWarpx2_02_13, S64x128bWarpx2_01_23, S32x128bWarpx4 };

struct TmemCopyLanes {
  std::uint32_t count = 0;  // 1, 2 or 4
  std::uint32_t lane[4] = {};
};

std::uint32_t tmem_copy_rows(TmemCopyShape shape);
std::uint32_t tmem_copy_columns(TmemCopyShape shape);  // 32-bit columns per row: 8 or 4
// One past the highest relative lane the copy writes.
std::uint32_t tmem_copy_lane_span(TmemCopyShape shape);
TmemCopyLanes tmem_copy_lanes(TmemCopyShape shape, std::uint32_t row);
const char* name_of(TmemCopyShape shape);

}  // namespace bwsim
