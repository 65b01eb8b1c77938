#pragma once
// colsum: the column sums of a rows x 64 f32 matrix, warp-specialized. A producer warp streams
// tiles of 32 rows with TMA through a ring of SMEM stages (full/empty mbarriers); a consumer warp
// adds each tile into its 64 running sums and releases the stage.
#include <bwsim/kernel/KernelRegistry.hpp>
#include <bwsim/kernel/Simulator.hpp>

#include <cstdint>
#include <vector>

namespace colsum {

constexpr std::uint32_t kCols = 64, kTileRows = 32;

struct Params {
  std::uint32_t rows = 1024;
  std::uint32_t stages = 2;
  bwsim::Cycle work_cycles = 200;  // the consumer's cycles per tile (its adds)
  bool forget_release = false;     // a bug: the consumer never releases a stage
  bool early_release = false;      // a bug: the consumer releases a stage before reading it
};

struct Result {
  bwsim::RunResult run;
  std::vector<double> sums;      // the consumer's, functional mode
  std::vector<double> expected;  // the CPU's
};

Result run(const bwsim::HardwareConfig& config, const bwsim::SimOptions& options, const Params& p);

// The kernel's entry for bwsim's command line (bwsim::register_kernel).
bwsim::KernelInfo kernel_info();

}  // namespace colsum
