#pragma once
// tma_stream: TMA loads and nothing else, the bandwidth microbenchmark. Each CTA's one thread
// keeps `stages` boxes in flight (arrive.expect_tx, cp.async.bulk.tensor, wait, re-arm), reading
// either data no other load touches (HBM) or, cycling, its own small region (L2-resident after
// the first pass). The same scenario as tools/calibration's k_tma_stream_grid on the H100.
#include <cstdint>

#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

struct TmaStreamParams {
  std::uint32_t ctas = 0;             // 0: one per SM
  std::uint32_t box_bytes = 32768;    // 128-byte rows, 1..256 of them
  std::uint32_t stages = 4;
  std::uint32_t loads = 256;          // per CTA
  std::uint32_t region_bytes = 0;     // per CTA, cycled through; 0: every load reads new data
};

struct TmaStreamResult {
  RunResult run;
  std::uint64_t bytes = 0;      // loaded, all CTAs
  double bytes_per_cycle = 0;   // aggregate, over the whole run
};

TmaStreamResult run_tma_stream(const HardwareConfig& config, const SimOptions& options, const TmaStreamParams& params);

KernelInfo tma_stream_kernel_info();

}  // namespace bwsim
