#pragma once
// gemm_sm90: D = A x B^T (A: M x K, B: N x K, K-major bf16; D: M x N bf16, fp32 accumulation) in
// the structure of CUTLASS's SM90 TMA warp-specialized persistent GEMMs, and line for line the
// program of its CUDA twin tools/calibration/gemm_sm90_twin.cu:
//   - 3 warpgroups: WG0 the producer (setmaxnreg.dec 40; warp 0 issues the TMA loads, warps 1-3
//     exit), WG1 and WG2 the consumers (setmaxnreg.inc 232) issuing wgmma m64nNk16 from SMEM;
//   - an S-stage mainloop (PipelineTmaAsync; 64 of K = 128 B per stage row, 128B swizzle), the
//     consumers keep one k-block of wgmmas in flight (wait_group 1) and release the stage before;
//   - cooperative: both consumer WGs on one BM = 2 x rows_per_wg tile, each its half; ping-pong:
//     each WG owns alternate tiles of BM = rows_per_wg, their mainloops and epilogues ordered by
//     two turn barriers so one WG's epilogue overlaps the other's mainloop;
//   - epilogue from registers: 64 x 64 chunks converted to bf16 into two 128B-swizzled SMEM
//     buffers per WG, stored with TMA (bulk groups, wait_group.read before reusing a buffer);
//   - a tile scheduler (TileScheduler, by default the static persistent one: raster, swizzle) over a grid of at most
//     one CTA per SM.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bwsim/hw/memory/GlobalMemory.hpp"
#include "bwsim/hw/memory/TensorMap.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernels/TileScheduler.hpp"

namespace bwsim {

enum class Sm90Schedule : std::uint8_t { Cooperative, Pingpong };

// The twin's producer thread, per k-block, from its empty barrier's wait returning to the k-block's
// first TMA load: 18 SASS instructions (its tile log's switched-off %globaltimer read and store
// among them, which a CUTLASS producer lacks), measured in the twin with --path-log on an H200
// (tools/calibration/h200_gemm_sm90_paths.csv, run_gemm_paths.sh; python3 gemm_paths.py on it):
// medians over the CTAs of eight validation shapes 63 / 70 / 70 / 70 / 74 / 77 / 84 / 85 cycles,
// their median 72. The instrumented build's stretch between its two clock reads is 16 instructions
// of a slightly different mix (the compiler moved four compares into it and four address
// instructions out of it); 63 at 2 stages against 84-85 at 4 says the SM's other warps share in it.
inline constexpr Cycle kTwinProducerPathCycles = 72;
// How far apart a launch's CTAs start, the bound on a draw's skew. ours: h200_dispatch.csv
// (h100_dispatch.cu, 200 launches; the mean of the %globaltimer ticks spanned resolves below the
// 32 ns tick): a 132-CTA wave starts within 74.2 / 71.0 cycles (two runs; 74.5 in a first, not
// kept, that did not print the offsets; another H200, h200_dispatch_chip2.csv: 72.9), in a pattern
// whose means agree within ~3 cycles between two runs of 200 launches and between two chips (6 at
// most, CTAs 92-93): partition 1's SMs ~32 cycles after partition 0's, a TPC's second SM ~20 after
// its first. So dispatch hardly makes one launch differ from the next; a draw skews each SM
// uniformly within the spread as a stand-in (E) for whatever does (one H200's launches of the
// ping-pong 8192^3 GEMM took 1.65-1.88 ms at 1294-1452 MHz). The span is measured at ~1.98 GHz on
// H200s and applied in cycles at any clock and to the H100 (E).
inline constexpr Cycle kDispatchSpreadCycles = 74;
// The twin's consumer warpgroup, per k-block, from its full barrier's wait returning to its first
// wgmma having issued (the descriptors' uniform arithmetic: 16-20 SASS instructions in the timed
// kernels, 14 between the instrumented build's clock reads, the wgmma's own issue slot, which the
// model charges as well, among them), measured the same way on a second H200
// (tools/calibration/h200_gemm_sm90_paths_run2.csv; the clock read after that wgmma, since one before
// it was hoisted above the arithmetic): 35.0 on one CTA, 35.0 / 36.0, 36.0 / 35.3 and 32.7 / 33.0
// (the two warpgroups) in the three ping-pong shapes, where a warpgroup has the tensor pipe to itself
// while its mainloop runs; their median 35. The cooperative shapes read 46-354 cycles, their two
// warpgroups' wgmmas queueing for the one pipe at issue: that wait is the pipe's, which the model
// has. (The producer's path on that H200: 64-80 cycles, median 68.)
inline constexpr Cycle kTwinConsumerPathCycles = 35;

struct GemmSm90Params {
  std::uint32_t m = 512, n = 512, k = 512;
  Sm90Schedule schedule = Sm90Schedule::Cooperative;
  std::uint32_t rows_per_wg = 64;  // 64 or 128: each consumer WG's rows of a tile (1 or 2 m64 fragments)
  std::uint32_t tile_n = 256;      // a multiple of 64 in 64..256
  std::uint32_t stages = 0;        // 0: as many as fit
  std::uint32_t grid = 0;          // CTAs; 0: min(tiles, SMs)
  std::string tile_scheduler = "static_persistent";  // tile_schedulers(), by name
  Raster raster = Raster::AlongM;
  std::uint32_t swizzle = 1;
  std::uint32_t warmup = 0;        // launches before the measured one (they warm the L2, as on hardware)
  // Measured launches after the warm-ups: with more than one, each is its own draw (its SMs'
  // starts skewed within kDispatchSpreadCycles unless the options perturb already) and the result
  // is the launch at the upper median of spans, as the twin reports its --reps.
  std::uint32_t draws = 1;
  bool log_tiles = false;          // record TileStart rows of the measured launch
  bool log_kblocks = false;        // with log_tiles: a row for every k-block's loads, not only each tile's first
  bool log_phases = false;         // record TilePhases rows of the measured launch
  Cycle producer_path_cycles = kTwinProducerPathCycles;  // the producer's own code per k-block
  Cycle consumer_path_cycles = kTwinConsumerPathCycles;  // a consumer's own code per k-block
  L2Promotion l2_promotion = L2Promotion::B256;  // A's and B's maps (the twin's --promotion)
};

// When a CTA started a tile in the measured launch: the cycle its producer issued the tile's first
// loads (the twin's --tile-log records the same moment with %globaltimer), or with --kb-log its
// k-block kb's loads.
struct TileStart {
  std::uint32_t cta = 0, sm = 0, j = 0, tile = 0, m = 0, n = 0;  // j: the tile's index in the CTA's sequence
  Cycle cycle = 0;
  std::uint32_t kb = 0;
};

// One consumer warpgroup's tile in the measured launch (the twin's --phase-log records the same
// moments with %globaltimer, by the warpgroup's first thread): its mainloop start (after the
// ping-pong turn wait, before wgmma.fence), mainloop end (after wgmma.wait_group 0) and epilogue
// end (after its last TMA store's commit); j: the tile's index in the warpgroup's sequence.
// The epilogue's steps as the twin's --chunk-log records them (clock64): its start (after the
// empty arrive and the turn wait) and, per chunk, when the warpgroup's first warp had passed the
// chunk's wait_group.read, its first bar.sync, its second (before the TMA store) and the store's
// commit.
struct TilePhases {
  static constexpr std::size_t kMaxChunks = 8;  // 2 fragments x 4 chunks of 64 columns
  struct Chunk {
    Cycle waited = 0, synced = 0, staged = 0, issued = 0;
  };
  std::uint32_t cta = 0, wg = 0, j = 0;
  Cycle cta_start = 0, ml_start = 0, ml_end = 0, epi_end = 0;
  Cycle epi_start = 0;
  std::uint32_t chunk_count = 0;
  std::array<Chunk, kMaxChunks> chunks{};
};

struct GemmSm90Result {
  RunResult run;        // the measured launch
  Cycle span = 0;       // first CTA start to last CTA end (what %globaltimer brackets on hardware)
  std::vector<Cycle> draw_spans;  // every measured launch's span, in launch order (GemmSm90Params::draws)
  Cycle span_low() const { return *std::min_element(draw_spans.begin(), draw_spans.end()); }
  Cycle span_high() const { return *std::max_element(draw_spans.begin(), draw_spans.end()); }
  std::uint32_t stages = 0, tiles = 0, grid = 0, tile_m = 0;
  double flops = 0;
  bool checked = false, matches = false;
  std::string detail;
  std::vector<TileStart> tile_starts;  // with GemmSm90Params::log_tiles, in the order they happened
  std::vector<TilePhases> tile_phases;  // with GemmSm90Params::log_phases, in the order the tiles ended
};

GemmSm90Result run_gemm_sm90(const HardwareConfig& config, const SimOptions& options, const GemmSm90Params& p,
                             bool check);
// A tile's rows: one consumer warpgroup's (ping-pong) or both's (cooperative).
std::uint32_t gemm_sm90_tile_m(const GemmSm90Params& p);

// gemm_sm90_twin.cu's operands (its make_map), which gemm_sm90 and gemm_sm90_loads read A and B
// through: bf16, K-major, `rows` rows of `k` elements `pitch` bytes apart, each box a k-block of
// kSm90TileK elements (one 128-byte row, 128B-swizzled) by `box_rows` rows, 256B L2 promotion
// unless `promotion` says otherwise (the twin's --promotion 128).
inline constexpr std::uint32_t kSm90TileK = 64;
TensorMap sm90_operand_map(GmemAddr address, std::uint32_t k, std::uint32_t pitch, std::uint32_t rows,
                           std::uint32_t box_rows, L2Promotion promotion = L2Promotion::B256);
// The tile order of --raster (m: M fastest, or n); an InputError otherwise.
Raster raster_arg(const KernelArgs& args);
// The operands' L2 promotion of --l2-promotion (128 or 256 bytes; the kernel declares the
// parameter in its KernelInfo); an InputError otherwise.
L2Promotion l2_promotion_arg(const KernelArgs& args);

// The twin's --tile-log format (tools/calibration/gemm_sm90_twin.cu, h100_gemm_loads.cu): one row
// per tile started, times from the first tile's start, at `clock_ghz`; tools/calibration/
// tile_drift.py reads either. With `per_kblock` (their --kb-log 1), one row per k-block's loads
// with a kb column (tools/calibration/kb_joins.py). An InputError if `path` cannot be written.
void write_tile_log(const std::string& path, const std::vector<TileStart>& starts, double clock_ghz, bool per_kblock);

KernelInfo gemm_sm90_kernel_info();
// gemm_sm90's producer alone, tools/calibration/h100_gemm_loads.cu (GemmSm90Loads.cpp).
KernelInfo gemm_sm90_loads_kernel_info();

}  // namespace bwsim
