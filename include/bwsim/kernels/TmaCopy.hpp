#pragma once
// tma_copy: the foundation's proving kernel. A producer warp streams the tiles of a 2-D tensor
// into an N-stage SMEM pipeline with TMA loads; consumer warps mark each stage consumed; a
// store warp writes each tile to the output tensor with a TMA store and releases the stage
// once the store has read it.
#include <cstdint>
#include <string>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

struct TmaCopyParams {
  std::uint32_t rows = 1024, cols = 1024;  // tensor shape (cols contiguous)
  DataType dtype = DataType::BF16;
  std::uint32_t box_rows = 64, box_cols = 64;
  std::uint32_t stages = 4;
  Swizzle swizzle = Swizzle::B128;
  std::uint32_t consumers = 1;      // consumer warps (besides the producer and the store warp)
  Cycle consume_cycles = 0;         // work each consumer does per tile
  std::uint32_t ctas = 1;
  std::uint32_t row_pitch = 0;     // bytes between rows in GMEM; 0: packed, rounded up to 16
  std::uint32_t stage_offset = 0;  // extra SMEM offset of the stage buffers (to test alignment rules)
};

struct TmaCopyResult {
  RunResult run;
  bool checked = false;
  bool matches = false;
  std::string mismatch;  // first differing byte, if any
  std::uint32_t tiles = 0;
};

// Runs the kernel; in functional mode (and with check) compares output and input byte for byte,
// and checks that row padding past the tensor's columns was never written (store clipping).
TmaCopyResult run_tma_copy(const HardwareConfig& config, const SimOptions& options, const TmaCopyParams& params,
                           bool check);

KernelInfo tma_copy_kernel_info();

}  // namespace bwsim
