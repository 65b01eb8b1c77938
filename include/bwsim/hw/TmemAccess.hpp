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

}  // namespace bwsim
