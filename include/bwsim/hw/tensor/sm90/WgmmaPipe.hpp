#pragma once
// One SM's SM90 tensor pipe (wgmma.mma_async). The four sub-partitions' tensor cores run a
// warpgroup's m64nNkK together, so the SM has one in-order pipe that every warpgroup of every
// resident CTA shares. An instruction occupies it for its initiation interval, the larger of its
// math time (2 * 64 * N * K FLOP at the input type's rate) and its SMEM operand time (A's 64 rows
// unless A is in registers, and B's N rows, 32 bytes of K each, at wgmma.smem_bytes_per_cycle);
// its accumulators are written the math time plus wgmma.latency_{ss,rs} after it starts.
// Functional mode computes each warp's 16 rows when the instruction starts (when it reads its
// operands) into the warp's accumulator registers.
#include <array>
#include <memory>
#include <vector>
#include <deque>
#include <cstdint>

#include "bwsim/core/SlotPool.hpp"
#include "bwsim/core/Stats.hpp"
#include "bwsim/hw/sm/SimContext.hpp"
#include "bwsim/hw/sm/SmemBackground.hpp"
#include "bwsim/hw/tensor/sm90/Wgmma.hpp"

namespace bwsim {

class Cta;

// A decoded, validated wgmma.mma_async.
struct WgmmaInstr {
  WgmmaShape shape;
  SmemDescriptorFields a, b;  // `a` unused when A is in registers
  bool a_from_regs = false;
  bool scale_d = false;       // false: D = A B; true: D += A B
  bool negate_a = false, negate_b = false;  // imm-scale-a / imm-scale-b = -1
};

struct WgmmaStats {
  std::uint64_t mmas = 0;  // warpgroup instructions
  double flops = 0;        // 2 * 64 * N * K each
  double f8_flops = 0;     // of those, with 8-bit operands
  Cycle busy_cycles = 0;   // cycles the pipe was occupied
  static const StatGroup<WgmmaStats>& declared();  // "wgmma.*", per SM
};

class WgmmaPipe {
 public:
  WgmmaPipe(SimContext& ctx, int sm_index, SmemBackground& smem) : ctx_(ctx), sm_(sm_index), smem_(smem) {}

  struct Timing {
    Cycle start = 0;  // the pipe starts it (reads its operands)
    Cycle done = 0;   // its accumulators are written
  };
  // Enters a warpgroup's instruction issued at `at` (by warp `warp`, for the trace).
  Timing issue(const WgmmaInstr& in, Cycle at, std::uint32_t warp);
  Cycle math_cycles(const WgmmaInstr& in) const;
  Cycle smem_cycles(const WgmmaInstr& in) const;
  static std::uint64_t smem_bytes(const WgmmaInstr& in);  // its SMEM operands' bytes
  Cycle latency(const WgmmaInstr& in) const;

  // Functional mode: at cycle `at`, (D +)= A B for the 16 rows of warp `warp_in_group` into `acc`
  // (lane-major, N/2 floats per lane); `a_regs` (32 lanes x 4 registers) when A is in registers.
  void execute_at(Cta& cta, const WgmmaInstr& in, std::uint32_t warp_in_group,
                  const std::shared_ptr<std::vector<float>>& acc, const std::uint32_t* a_regs, Cycle at);

  const WgmmaStats& stats() const { return stats_; }

 private:
  struct Pending {
    WgmmaInstr instr;
    Cta* cta;
    std::uint32_t warp_in_group;
    std::shared_ptr<std::vector<float>> acc;
    bool has_a_regs;
    std::array<std::uint32_t, 32 * kWgmmaARegisters> a_regs;
  };
  static void on_execute(void* pipe, std::uint64_t slot);
  void execute(const Pending& p) const;

  SimContext& ctx_;
  int sm_;
  SmemBackground& smem_;  // the SM's: this pipe's operand reads
  Cycle free_at_ = 0;
  SlotPool<Pending> pending_;
  WgmmaStats stats_;
};

// The wgmmas of one warpgroup that not all four of its warps have issued yet (.sync.aligned:
// each warp executes each one, in the same order). The first warp to reach its k-th wgmma enters
// it into the pipe and records it here; the others must issue the same instruction and take its
// timing.
struct WarpgroupWgmmas {
  struct Entry {
    WgmmaInstr instr;
    std::uint64_t a_raw = 0, b_raw = 0;  // the descriptors as issued (A's 0 when in registers)
    WgmmaPipe::Timing timing;
    std::uint32_t warps = 0;  // how many of the four issued it
  };
  std::deque<Entry> entries;
  std::uint64_t first = 0;  // the instruction index of entries.front()
};

}  // namespace bwsim
