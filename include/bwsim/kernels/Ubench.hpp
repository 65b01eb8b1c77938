#pragma once
// The microbenchmarks of tools/calibration/h100_ubench.cu as bwsim programs: the same dependent
// chains, iteration counts, warm-ups and clock placement, so that a scenario's simulated result
// compares one for one with the hardware's row of h100_measured.csv (scenario, param, cycles).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

// What a scenario's param is, and so which values it takes.
enum class UbenchParam : std::uint8_t {
  Ignored,      // any (the CSV writes 1 or the box size)
  ClusterSize,  // 1 .. cluster.max_ctas
  BoxBytes,     // a multiple of 128 in 128 .. 32768 (128-byte rows)
  InFlight,     // bytes in flight per CTA: whole 32 KiB boxes, at least one, fitting SMEM
  WgmmaN,       // the wgmma's N: a multiple of 8 in 8..256
  ClockMhz,     // the SM clock the scenario runs at, in MHz
  Ctas,         // CTAs of the launch, one per SM: 1..sm.count
  UmmaN,        // a tcgen05.mma's N: a multiple of 16 in 16..256
  SaBoxBytes,   // a box of 512-byte rows: 512 x 2^i up to 131072
  SaTileBytes,  // a box of 512-byte rows, 1..128 of them (whole rows)
  StreamInFlight,  // bytes in flight per streaming CTA of a loaded-latency run: 0 (none) or 1..4 32 KiB boxes
  WarpsPerSubPartition,  // warps on each of the SM's 4 sub-partitions: 1..8
  FootprintMib,  // MiB of data all SMs read: 3..1024 (at least a 16 KiB box per SM)
  BoxRows,       // rows of 128 bytes in a box: 1..256
  DelayCycles,   // cycles a program waits between two steps: 0..100000
  BoxStep,       // boxes between consecutive SMs' first boxes in a shared ring of 128: 0..127
  LagBoxes,      // boxes a follower reads behind its leader: 0..255
  Warps,         // warps of the one CTA: 1..32
  BoxStages,     // 16 KiB boxes in flight per CTA: 1..8
  BackgroundCtas,  // SMs streaming beside one probe SM: 0..sm.count - 1
};

struct UbenchScenario {
  std::string name;  // as in the CSV
  UbenchParam param;
  // The simulated value in the CSV's unit (cycles, or bytes per cycle x 100 for the streams).
  std::function<std::int64_t(const HardwareConfig& config, std::uint32_t param)> run;
};

// Runs `s` with `param` after checking the param is one the scenario takes (InputError if not).
std::int64_t run_ubench(const HardwareConfig& config, const UbenchScenario& s, std::uint32_t param);

const std::vector<UbenchScenario>& ubench_scenarios();
// The wgmma scenarios (UbenchWgmma.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> wgmma_scenarios();
// The loaded-latency scenarios (UbenchLoaded.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> loaded_latency_scenarios();
// The HBM operand-box scenarios (UbenchLoaded.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> hbm_box_scenarios();
// The CUDA-core unit and softmax-twin scenarios (UbenchCudaCore.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> cuda_core_scenarios();
// The L2 footprint sweep (UbenchL2Footprint.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> l2_footprint_scenarios();
// A probe SM's cold or hot boxes beside SMs streaming from HBM, h100_hbm_loaded.cu
// (UbenchHbmLoaded.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> hbm_loaded_scenarios();
// The L2-hit latency of strided and promoted boxes (UbenchHitBoxes.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> hit_box_scenarios();
// All-SM streams with a share of boxes from HBM (UbenchHitMissMix.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> hit_miss_mix_scenarios();
// Streams of TMA stores and reduce-adds from 1..132 SMs (UbenchBulkWrites.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> bulk_write_scenarios();
// A synchronized burst of HBM boxes from G SMs (UbenchHbmBurst.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> hbm_burst_scenarios();
// The spread of box latencies and landing intervals of all-SM streams, h100_box_spread.cu
// (UbenchBoxSpread.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> box_spread_scenarios();
// Pairs of SMs reading the same cold boxes a set delay apart, h100_join_window.cu arrivals_cold
// (UbenchJoinArrivals.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> join_arrival_scenarios();
// The GEMM-mainloop stage ring (UbenchStageRing.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> stage_ring_scenarios();
// Each SM streaming its own A boxes, h100_gemm_loads.cu --private-a (UbenchPrivateStream.cpp), part of
// ubench_scenarios().
std::vector<UbenchScenario> private_stream_scenarios();
// Generic ld/st.shared of 1..32 warps through the SM's SMEM port (UbenchSmemPort.cpp), part of
// ubench_scenarios().
std::vector<UbenchScenario> smem_port_scenarios();
// The GEMM epilogue's parts, h100_epilogue.cu (UbenchEpilogue.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> epilogue_scenarios();
// The epilogue's staging beside wgmma / TMA traffic, h100_epilogue.cu (UbenchEpilogueBackground.cpp).
std::vector<UbenchScenario> epilogue_background_scenarios();
// The SemiAnalysis B200 scenarios (UbenchB200.cpp), part of ubench_scenarios().
std::vector<UbenchScenario> b200_published_scenarios();
const UbenchScenario* find_ubench(const std::string& name);

// One row of a comparison with hardware: the measured value (a row of a CSV written by
// tools/calibration/run_h100.sh), the simulated one and the relative error against the row's
// tolerance.
struct UbenchComparison {
  std::string scenario;
  std::uint32_t param = 0;
  std::int64_t measured = 0, predicted = 0;
  double error = 0;       // (predicted - measured) / measured
  double tolerance = 0;   // |error| allowed
  std::string reason;     // why the tolerance is wider than the 10% target, if it is
  bool within() const { return error <= tolerance && -error <= tolerance; }
};

// Simulates every row of `measured_csv` on `config`. `tolerances_csv` (scenario,param,tolerance,
// reason; param * for every param) widens the default 10% for rows the model does not reach,
// each with its reason. Throws InputError for unreadable files or unknown scenarios.
std::vector<UbenchComparison> compare_with_hardware(const HardwareConfig& config, const std::string& measured_csv,
                                                    const std::string& tolerances_csv);

// bwsim run ubench --scenario NAME --size P (the CSV's param).
KernelInfo ubench_kernel_info();

}  // namespace bwsim
