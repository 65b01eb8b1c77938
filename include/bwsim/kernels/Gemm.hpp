#pragma once
// gemm: D = A x B^T (A: M x K, B: N x K, both K-major), the warp-specialized structure of
// CUTLASS's sm100 TMA warp-specialized GEMM on cta_group::1: a TMA producer warp, an MMA warp and
// a 4-warp epilogue (tcgen05.ld -> registers -> SMEM -> TMA store), an N-stage SMEM mainloop
// pipeline (PipelineTmaUmmaAsync) and a 2-stage TMEM accumulator pipeline (PipelineUmmaAsync) so
// a tile's epilogue overlaps the next tile's mainloop. Each CTA loops over output tiles
// (persistent: tile t goes to CTA t mod grid). The block-scaled formats (CUTLASS's SM100
// block-scaled GEMM) also load A's and B's scale-factor atoms with TMA into each stage, and the MMA
// warp copies them to TMEM (tcgen05.cp .32x128b.warpx4) before the stage's MMAs; a tile whose two
// accumulators and factors do not fit the 512 TMEM columns keeps one accumulator.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernels/TileScheduler.hpp"

namespace bwsim {

// Deliberate kernel bugs (the mutation suite), to see what the simulator reports for each.
enum class GemmBug : std::uint8_t {
  None,
  NoZeroInit,           // the first MMA of a tile accumulates onto the previous tile's accumulator
  SkipKBlock,           // the last K=32-byte MMA of every k-tile is not issued
  WrongProducerPhase,   // the producer starts at phase 0, so its first acquire waits for a release
  MissingExpectTx,      // the producer arrives on the full barrier without expect_tx
  WrongTxBytes,         // expect_tx counts A's bytes only
  ReleaseBeforeCommit,  // the MMA warp frees a stage with a plain arrive instead of tcgen05.commit
  NoPhaseFlip,          // the MMA warp's stage index wraps without flipping the phase bit
  McastMaskMissing,     // A's multicast mask leaves out the last CTA of the row
  EarlyEpilogueRead,    // the epilogue reads the accumulator without waiting for its full barrier
  EarlyDealloc,         // the MMA warp frees TMEM without waiting for the epilogue's last reads
  SameQuadrant,         // epilogue warps take quadrant warp_idx - 2, not warp_idx % 4
  UseBeforeWaitLd,      // the epilogue converts tcgen05.ld results before tcgen05.wait::ld
  // The second suite: how real warp-specialized kernels fail (CUTLASS / FlashAttention trackers).
  StageCountOffByOne,       // the MMA warp's ring wraps after stages - 1 stages
  NoProducerTail,           // the producer exits without waiting for its last stages' release
  NoClusterExitSync,        // no cluster barrier before exit while peers may still signal
  NoFenceMbarrierInit,      // a relaxed cluster arrive after init without fence.mbarrier_init
  ReinitLiveBarrier,        // the producer re-initialises stage 0's full barrier at its second tile
  AccumulatorArrivalsShort, // the accumulator's empty barrier expects one epilogue warp too few
  AccumulatorArrivalsLong,  // ... one too many
  AccStageNotAdvanced,      // the MMA warp always writes accumulator 0
  EarlyAccumulatorRelease,  // the epilogue releases the accumulator after its first chunk
  MissingProxyFence,        // st.shared of the staged D, then the TMA store without fence.proxy.async
  StagingBufferReuse,       // st.shared into a staging buffer a TMA store may still read
  CommitMaskMissesPeer,     // the accumulator commit of a CTA pair signals the leader only
  PairLoadsOwnBarrier,      // a pair's B loads without .cta_group::2 signal their own CTA's barrier
  ReuseStageEarly,          // the producer refills a stage the first time without waiting for its release
  NoRelinquish,             // no tcgen05.relinquish_alloc_permit after the allocation
  NoFinalStoreWait,         // the epilogue exits without waiting for its last TMA stores
  ReleaseBeforeEpilogueSync,  // one elected epilogue warp releases the accumulator for all four,
                             // before the named barrier that orders the other three's reads
};
const char* name_of(GemmBug bug);
std::optional<GemmBug> parse_gemm_bug(std::string_view name);

struct GemmParams {
  std::uint32_t m = 512, n = 512, k = 512;
  std::string dtype = "bf16";        // A/B format: gemm_formats() (GemmFormat.hpp)
  DataType d_type = DataType::F32;    // f32 or bf16 (s32 for s8)
  std::uint32_t tile_n = 256;  // tile M is 128: the 4-warp epilogue covers the 128 TMEM lanes
  std::uint32_t stages = 0;   // mainloop stages; 0: as many as SMEM allows
  std::uint32_t ctas = 1;
  GemmBug bug = GemmBug::None;
  // Cluster of cluster_m x cluster_n CTAs (A multicast along N, B along M); two_sm: CTA pairs
  // along M run 256 x tile_n cta_group::2 MMAs. ctas must be a multiple of the cluster size.
  std::uint32_t cluster_m = 1, cluster_n = 1;
  bool two_sm = false;
  // Which cluster tile each cluster computes next (tile_schedulers(), by name) and its order;
  // auto_raster: along N when there are more tiles along M than along N, else along M.
  std::string tile_scheduler = "static_persistent";
  Raster raster = Raster::AlongM;
  bool auto_raster = false;
  std::uint32_t swizzle = 1;
};

struct GemmResult {
  RunResult run;
  std::uint32_t stages = 0, tiles = 0;
  Raster raster = Raster::AlongM;  // the order the tiles were handed out in (auto resolved)
  double flops = 0;  // 2*M*N*K
  bool checked = false, matches = false;
  std::string detail;  // check summary or the first mismatch
  double max_error = 0;
};

GemmResult run_gemm(const HardwareConfig& config, const SimOptions& options, const GemmParams& params, bool check);

// gemm (cta_group::1), gemm_mcast (clusters with multicast), gemm_2sm (CTA pairs).
std::vector<KernelInfo> gemm_kernel_infos();

}  // namespace bwsim
