#pragma once
// A CoreBlock from real SASS: the listing cuobjdump -sass prints (one instruction a line,
// "/*0410*/ FMNMX R141, R20, R12, !PT ;"), in its order, each instruction on the pipe of its
// opcode and reading the registers (R, P, UR, UP) that earlier instructions of the listing wrote.
// So the compiled loop body of a real kernel runs in the model exactly as the compiler ordered
// it (tools/calibration/softmax_sass.txt: the softmax twin).
#include <string>
#include <string_view>

#include "bwsim/kernel/CoreBlock.hpp"

namespace bwsim {

// The pipe an opcode ("FFMA", "MUFU.EX2", "F2FP.BF16.F32.PACK_AB") runs on; Other for the units
// the model has no pipe for (stores, branches, uniform-datapath ops).
CoreOp sass_op(std::string_view opcode);

// The block of the listing's instructions; lines that hold no instruction are skipped.
CoreBlock sass_block(std::string name, std::string_view listing, const HardwareConfig& config);

// The lines under the header line starting with `header` in `listings` (as
// tools/calibration/sass_counts.py --listing writes them), up to the next header ("== "). Throws
// InputError if there is no such section.
std::string sass_listing_section(std::string_view listings, std::string_view header);

}  // namespace bwsim
