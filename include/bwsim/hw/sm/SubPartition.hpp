#pragma once
// One sub-partition's warp scheduler and CUDA-core pipes, shared by the blocks (straight-line
// CUDA-core code, hw/sm/CoreInstructions) its warps run at the same time. Each block is known by
// its schedule alone: `work` cycles in segments, each using each resource (the issue slot, each
// pipe) at a steady demand, then a `drain` that uses none. The running blocks share the resources max-min fairly
// (progressive filling, as a round-robin scheduler shares its issue slot among ready warps): every
// block's speed rises together until some resource is full; the blocks using it stay at that
// speed, the others go on rising, up to their speed alone. So latency-bound blocks whose demands
// fit side by side all run at their own speed, and an FMA stream beside MUFU-bound warps gets the
// issue slots they leave. The shares change only when a block starts, moves to its next segment
// or finishes its work, and only then is anything recomputed: one event per change, not per
// instruction; a block alone runs at its standalone speed through every segment, so it needs
// one event, at its end.
#include <cstdint>
#include <vector>

#include "bwsim/hw/sm/CoreInstructions.hpp"
#include "bwsim/hw/sm/SimContext.hpp"

namespace bwsim {

struct WarpState;
class Cta;

class SubPartition {
 public:
  explicit SubPartition(SimContext& ctx) : ctx_(ctx) {}
  SubPartition(const SubPartition&) = delete;
  SubPartition& operator=(const SubPartition&) = delete;

  // `ws` (parked on WaitKind::CoreBlock) starts `block` now; `cta` wakes it when the block's
  // results are written. Counts the block's pipe and issue cycles into `stats`.
  void start(Cta& cta, WarpState& ws, const CoreBlockProfile& block, CorePipeStats& stats);

  // Blocks in their work phase (for tests).
  std::size_t running() const { return running_.size(); }

 private:
  struct Running {
    Cta* cta;
    WarpState* ws;
    const CoreBlockProfile* block;
    std::size_t segment;  // the one it is in
    double remaining;     // cycles of that segment's standalone work left
    double rate;          // standalone work cycles per cycle, at most 1
    const CoreDemand& demand() const { return block->segments[segment].demand; }
  };
  void advance();  // brings `remaining` to now at the current rate
  void share();    // the running blocks' rates (progressive filling)
  void plan();     // share(), then the next finish's event
  static void on_finish(void* self, std::uint64_t generation);

  SimContext& ctx_;
  std::vector<Running> running_;
  Cycle updated_ = 0;
  std::uint64_t generation_ = 0;    // of the scheduled finish event; older ones are stale
};

}  // namespace bwsim
