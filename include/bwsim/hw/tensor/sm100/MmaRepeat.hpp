#pragma once
// A warp's last plain tcgen05.mma of each form (A in SMEM, A in TMEM) that issued without error,
// kept so that the next MMA of a K loop is checked only where it can differ. That MMA is the same
// instruction (kind, instruction descriptor, D, cta_group, every SMEM descriptor bit but the start
// address, A's TMEM lane) with other operand start addresses (A's TMEM column) and enable-input-d.
// Its decoded fields and the validity of its shape are then the last one's, and so are D's TMEM
// columns and a pair peer's residency while the TMEM allocations stand (Tmem::epoch, the peer's
// too) and the peer has not exited: only its operands' SMEM bounds and A's TMEM columns are
// checked again, in the order the full checks take them, so an error is the one they would
// report. The MMA is then raced, issued and counted as any other.
#include <array>
#include <cstdint>

#include "bwsim/hw/tensor/sm100/MmaInstr.hpp"

namespace bwsim {

// In WarpState: a warp belongs to one CTA for its life, so its entries are that CTA's.
struct MmaRepeat {
  struct Entry {
    bool valid = false;
    MmaKind kind = MmaKind::F16;
    std::uint32_t idesc = 0, d = 0, cta_group = 0;
    std::uint64_t a_rest = 0, b_rest = 0;  // the SMEM descriptors without their start addresses
    std::uint32_t a_lane = 0;              // A in TMEM: its lane
    std::uint64_t epoch = 0, peer_epoch = 0;  // of the SM's TMEM allocations, and of the pair peer's
    MmaInstr in;                              // decoded and validated
    MmaCost cost;                             // its cost in the tensor pipe
    SpanOffsets a_offsets, b_offsets;         // of the SMEM operands' spans from their start addresses
  };
  std::array<Entry, 2> of_form;  // [0]: A in SMEM, [1]: A in TMEM
};

}  // namespace bwsim
