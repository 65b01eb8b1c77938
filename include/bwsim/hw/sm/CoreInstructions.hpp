#pragma once
// Straight-line CUDA-core code as a sub-partition issues it: instructions in program order, each
// on its pipe, each waiting for the results it reads. A block is scheduled alone once, when it is
// built (`schedule_alone`): that schedule gives what the sub-partition's fluid sharing
// (hw/sm/SubPartition) needs, so a block costs the simulation O(1) events whatever its length.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Cycle.hpp"
#include "bwsim/hw/sm/CorePipes.hpp"

namespace bwsim {

// What an instruction does to the pipes: the pipe and its lanes' worth per lane.
enum class CoreOp : std::uint8_t {
  Fma,   // FFMA, FADD, FMUL, IMAD (fp32 pipe)
  Fma2,  // FFMA2, FADD2, FMUL2 (SM100, pipes.paired_fp32): two operations per lane, one issue slot
  Alu,   // FMNMX, LOP3, IADD3, SHF, FSETP, ISETP
  Mufu,  // MUFU.EX2, MUFU.RCP, ...
  Cvt,   // F2FP (fp32 pairs packed to bf16x2/f16x2), F2I, I2F
  Other,  // a unit outside these pipes (a store, a branch, a uniform-datapath op): its issue slot
};
inline constexpr std::size_t kCoreOps = static_cast<std::size_t>(CoreOp::Other) + 1;
// The pipe `op` takes (CorePipe::kCount for Other: none).
CorePipe pipe_of(CoreOp op);

inline constexpr std::uint32_t kNoInput = ~0u;

struct CoreInstr {
  CoreOp op = CoreOp::Fma;
  std::array<std::uint32_t, 3> inputs{kNoInput, kNoInput, kNoInput};  // producers' indices, or kNoInput
};

inline constexpr std::size_t kCorePipes = static_cast<std::size_t>(CorePipe::kCount);

// The resources a block's instructions take: the issue slot, then each pipe.
inline constexpr std::size_t kCoreResources = kCorePipes + 1;
using CoreDemand = std::array<double, kCoreResources>;

// A stretch of a block's schedule alone over which its use of each resource is about steady:
// `cycles` long, taking `demand[k]` of resource k per cycle (at most 1). Compiled code has
// phases (a row max on the ALU, then exp2 on the MUFU, ...), and warps sharing a sub-partition
// overlap them or not depending on where each is.
struct CoreSegment {
  Cycle cycles = 0;
  CoreDemand demand{};
};

// A block's schedule when its warp has the sub-partition to itself.
struct CoreBlockProfile {
  std::uint32_t instructions = 0;
  Cycle work = 0;   // from its first issue until its last issue slot and pipe cycle are used
  Cycle drain = 0;  // then until its last result is written (no resources held)
  Cycle issue_cycles = 0;  // issue slots taken
  std::array<Cycle, kCorePipes> pipe_cycles{};  // cycles each pipe is taken
  std::vector<CoreSegment> segments;  // the work, in order: their cycles add up to `work`
};
// Windows of a schedule are merged into one segment while no resource's demand differs by more
// than kSegmentTolerance from the segment's; a block has at most kMaxSegments.
inline constexpr Cycle kSegmentWindow = 32;
inline constexpr double kSegmentTolerance = 0.25;
inline constexpr std::size_t kMaxSegments = 16;

// Cycles a warp instruction holds its sub-partition's `pipe`: `work` lanes' work (32; 64 for a
// paired op) over the pipe's lanes per sub-partition, at least one issue slot.
Cycle pipe_occupancy(CorePipe pipe, const HardwareConfig& config, std::uint32_t work = 32);
// The same for an instruction of `op` (one issue slot for Other).
Cycle pipe_occupancy(CoreOp op, const HardwareConfig& config);

// In-order issue of `code`, alone on a sub-partition: an instruction issues once the previous one
// has (warp.issue_cycles later), its inputs' latencies (pipes.*_latency) have passed and its pipe
// is free. The segments: the use of each resource per kSegmentWindow cycles, merged as above. Throws ConfigError for a paired op on a config without pipes.paired_fp32, and
// std::invalid_argument for an input that is not an earlier instruction.
CoreBlockProfile schedule_alone(std::span<const CoreInstr> code, const HardwareConfig& config);

// The order a compiler's list scheduler gives source-level code (as ptxas reorders straight-line
// code to hide latencies): repeatedly the instruction, among those whose producers are placed,
// that could issue soonest on `config`'s sub-partition (its inputs' latencies, its pipe's
// occupancy, one issue per slot), the earliest in program order on ties. Inputs are renumbered to
// the new order. O(n^2): for blocks built once, not per event.
std::vector<CoreInstr> list_schedule(std::span<const CoreInstr> code, const HardwareConfig& config);

}  // namespace bwsim
