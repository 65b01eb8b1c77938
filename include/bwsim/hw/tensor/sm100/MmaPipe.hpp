#pragma once
// One SM's tensor-core pipe (tcgen05.mma, tcgen05.cp). Instructions enter in issue order; each
// occupies the pipe for its initiation interval, the larger of its math time (2*128*N*K FLOP at
// the kind's rate: M = 64 uses the same time at half the FLOP) and its SMEM operand time (A and B
// bytes at mma.smem_bytes_per_cycle; B only when A is in TMEM; 32 bytes of K per row for every
// kind, and 64 of B for .sp, whose logical K is doubled: it takes the dense time for twice the FLOP). D is complete the math time plus the pipe latency after the instruction starts (plus
// mma.block_scale_latency for the block-scaled kinds). A tcgen05.cp reads its source at the same SMEM
// rate through the same pipe (so it stays ordered with the thread's MMAs) and its data is in TMEM
// tmem.access_latency after the read ends. Functional mode moves the real SMEM and TMEM bytes
// when the instruction starts (the cycle it reads its operands).
#include <cstdint>

#include "bwsim/core/SlotPool.hpp"
#include "bwsim/core/Stats.hpp"
#include "bwsim/hw/sm/SimContext.hpp"
#include "bwsim/hw/tensor/sm100/MmaInstr.hpp"
#include "bwsim/hw/tensor/sm100/SmemOperandMemo.hpp"
#include "bwsim/hw/tensor/sm100/Tmem.hpp"
#include "bwsim/hw/tensor/sm100/TmemAccess.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {

class Cta;
struct WarpState;

// The TMEM cell holding the scale factors of row m of A (column n of B) of a block-scaled MMA,
// relative to the scale operand's address: lane m % 128 (B: n % 32, the lane quadrants hold
// copies), column m / 32 (n / 32); the instruction's factors are bytes sf_id.. of that word. This
// is the layout CUTLASS builds with tcgen05.cp .32x128b.warpx4 from its 128x4 SMEM atom
// (PTX requires the factors replicated in all four lane quadrants).
TmemCell scale_a_cell(std::uint32_t m);
TmemCell scale_b_cell(std::uint32_t n);

// A decoded, validated tcgen05.cp.
struct TmemCopyInstr {
  TmemCopyShape shape = TmemCopyShape::S128x256b;
  SmemDescriptorFields src;
  TmemAddr dst;
  bool pair = false;  // cta_group::2: each CTA of the pair copies from its SMEM into its TMEM
};

// A decoded, validated tcgen05.shift.down: in each 32-lane sub-partition rows 0-30 take the next
// row's 8 columns (256 bits) from `at`'s column; row 31 keeps its value (PTX: "32-byte elements
// downwards across all the rows, except the last, by one row"; the per-sub-partition boundary and
// the direction are from a third-party B200 measurement and CuTe DSL's docstring: PTX leaves them
// open). cta_group::2 shifts in both CTAs of the pair.
struct TmemShiftInstr {
  TmemAddr at;
  bool pair = false;
};
inline constexpr std::uint32_t kShiftColumns = 8;

// Dense FLOP (OP for kind::i8) per cycle per SM of the kind at M = 128 (mma.*_per_cycle).
std::uint32_t mma_flops_per_cycle(const HardwareConfig& config, MmaKind kind);

struct MmaStats {
  std::uint64_t mmas = 0;
  double flops = 0;          // useful FLOP (2*M*N*K per instruction)
  double f8_flops = 0;       // of those, kind::f8f6f4 and kind::mxf8f6f4
  double f4_flops = 0;       // kind::mxf4 and kind::mxf4nvf4
  double int_ops = 0;        // kind::i8 (counted in flops too)
  Cycle busy_cycles = 0;     // cycles the pipe was occupied
  std::uint64_t copies = 0;  // tcgen05.cp
  std::uint64_t copy_bytes = 0;
  std::uint64_t shifts = 0;  // tcgen05.shift
  static const StatGroup<MmaStats>& declared();  // "mma.*", per SM
};

class MmaPipe {
 public:
  MmaPipe(SimContext& ctx, int sm_index, Tmem& tmem);

  // Enters `instr`, issued at cycle `at`, into the pipe; returns the cycle D is complete.
  Cycle issue(Cta& cta, WarpState& ws, const MmaInstr& instr, Cycle at) { return issue(cta, ws, instr, cost(instr), at); }
  // The same with `instr`'s cost(), which a warp repeating an MMA keeps.
  Cycle issue(Cta& cta, WarpState& ws, const MmaInstr& instr, const MmaCost& cost, Cycle at);
  MmaCost cost(const MmaInstr& instr) const;
  // Enters a tcgen05.cp issued at `at`; returns the cycle its data is in TMEM.
  Cycle issue(Cta& cta, WarpState& ws, const TmemCopyInstr& instr, Cycle at);
  // Enters a tcgen05.shift: mma.shift_cycles in the pipe, its rows moved mma.shift_latency after it starts.
  Cycle issue(Cta& cta, WarpState& ws, const TmemShiftInstr& instr, Cycle at);
  // Math and SMEM cycles of `instr` (its initiation interval is their maximum).
  Cycle math_cycles(const MmaInstr& instr) const;
  Cycle smem_cycles(const MmaInstr& instr) const;
  Cycle latency(const MmaInstr& instr) const;

  const MmaStats& stats() const { return stats_; }

  // The .ws B collector buffers (per SM's tensor core): the B descriptor a fill left in each, if
  // still valid, and the CTA whose fill it was (another CTA on the SM finds it empty). Updated in
  // issue order by the issuing warp (Warp::issue_mma checks use / lastuse).
  struct CollectorBuffer {
    bool valid = false;
    const Cta* owner = nullptr;
    SmemDescriptorFields b;
    DataType type = DataType::BF16;
  };
  CollectorBuffer& collector(std::uint32_t i) { return collectors_[i]; }

  // The last SMEM operands decoded for this tensor core, by the warps of every CTA on the SM: an
  // MMA's A (0) and B (1), tcgen05.cp's source (2). A host-side memo (SmemOperandMemo): the warps
  // issuing here step their descriptors along K.
  SmemOperandMemo& operand_memo(std::uint32_t which) { return operand_memos_[which]; }

 private:
  Cycle pipe_latency(const MmaInstr& instr) const;  // by shape and operand source
  template <class Instr>
  struct Pending {
    Instr instr;
    Cta* cta;
    WarpState* ws;  // the issuing warp (where a fault found when it executes is reported)
  };
  // Reserves the pipe (and the pair's other pipe, if any) for `interval` cycles from the first
  // cycle after issue at `at` that both are free; returns the start.
  Cycle reserve(Cycle at, Cycle interval, MmaPipe* peer);
  template <class Instr>
  static void on_start(void* pipe, std::uint64_t slot);
  void execute(const MmaInstr& instr, Cta& cta, WarpState& ws);
  void execute_integer(const MmaInstr& instr, Cta& cta, WarpState& ws);
  void execute(const TmemCopyInstr& instr, Cta& cta, WarpState& ws);
  void execute(const TmemShiftInstr& instr, Cta& cta, WarpState& ws);
  SlotPool<Pending<MmaInstr>>& pending(const MmaInstr*) { return pending_mma_; }
  SlotPool<Pending<TmemCopyInstr>>& pending(const TmemCopyInstr*) { return pending_copy_; }
  SlotPool<Pending<TmemShiftInstr>>& pending(const TmemShiftInstr*) { return pending_shift_; }
  template <class Instr>
  void schedule_execute(Cta& cta, WarpState& ws, const Instr& instr, Cycle start);

  SimContext& ctx_;
  int sm_;
  Tmem& tmem_;
  Cycle free_at_ = 0;
  std::uint64_t next_id_ = 0;
  SlotPool<Pending<MmaInstr>> pending_mma_;
  SlotPool<Pending<TmemCopyInstr>> pending_copy_;
  SlotPool<Pending<TmemShiftInstr>> pending_shift_;
  MmaStats stats_;
  CollectorBuffer collectors_[4];
  SmemOperandMemo operand_memos_[3];
};

// The TMEM lane that holds row m of an M-row cta_group::1 accumulator (M = 128: lane m; M = 64:
// rows 16q..16q+15 in lanes 32q..32q+15 of quadrant q). Not for .ws (accumulator_cell).
std::uint32_t accumulator_lane(std::uint32_t m, std::uint32_t rows);
// Where D[m][n] of `instr` lives relative to its D address, m counted within one CTA's rows:
// cta_group::1 as above; cta_group::2 M = 256 lane m, column n; M = 128 (PTX Layout B, per
// CUTLASS tmem_frg_2sm) lane m + 64 * (n / (N/2)), column n % (N/2); .ws (PTX Layouts G, E, D;
// CUTLASS tmem_frg_ws) M = 32 lane m + 32 (n / (N/4)), column n % (N/4), M = 64 lane
// m + 64 (n / (N/2)), column n % (N/2), M = 128 lane m, column n.
TmemCell accumulator_cell(const MmaInstr& instr, std::uint32_t m, std::uint32_t n);
// How many consecutive n of a row land in consecutive columns of one lane (from a multiple of it):
// N, or the fold of the layouts above (N/2, N/4).
std::uint32_t accumulator_run(const MmaInstr& instr);

}  // namespace bwsim
