#pragma once
// Every size, latency and rate the model uses. Values come from sim_configs/*.yaml, where each
// one cites its source; nothing here has a default, so a config must state every value.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

struct HardwareConfig {
  std::string name;
  std::string source;    // the file (or text origin) it was read from, for messages
  double clock_ghz = 0;  // SM clock used to turn cycles into seconds and FLOP/s

  struct Sm {
    std::uint32_t count = 0;                // SMs on the chip
    std::uint32_t smem_bytes = 0;           // shared memory per SM
    std::uint32_t max_smem_per_cta = 0;     // largest dynamic SMEM one CTA may request
    std::uint32_t max_threads_per_cta = 0;
    std::uint32_t max_warps = 0;            // resident warps per SM
    std::uint32_t registers = 0;            // 32-bit registers per SM (the CTA's pool for setmaxnreg)
    std::uint32_t max_ctas = 0;             // resident CTAs per SM
    std::uint32_t smem_reserved_per_cta = 0;  // shared memory the system reserves for each resident CTA
    std::uint32_t gpcs = 0;                 // GPCs; the SMs' TPCs (2 SMs each) spread over them evenly
    std::uint32_t tpcs_per_cpc = 0;         // TPCs per CPC (a GPC's group of TPCs); 0: one CPC per GPC (or tpc_cpcs)
    // Optional: the TPCs of each GPC in the order the block scheduler fills the GPCs (which is
    // the SMs' numbering); empty: spread evenly, die by die (hw/sm/ChipLayout).
    std::vector<std::uint32_t> gpc_tpcs;
    // Optional, with gpc_tpcs: the CPC of each TPC within its GPC (0, 1, ...), TPC by TPC in SM
    // order over the chip, where a chip's CPCs do not take a GPC's TPCs in order; empty: CPCs of
    // tpcs_per_cpc consecutive TPCs.
    std::vector<std::uint32_t> tpc_cpcs;
  } sm;

  // The chip's dies (hw/sm/ChipLayout, hw/memory/MemorySystem). Each die has whole GPCs (an
  // equal share unless of_gpc says otherwise; a cluster, which stays in one GPC, never spans dies), its half of the
  // L2 and of the HBM stacks; an address is homed in one die's L2 half, chosen by the parity of
  // the address's interleave granules (an XOR hash). Bytes an SM reads from or writes to the
  // other die's half cross the die-to-die link. count 1: one die, the link values unused.
  struct Dies {
    std::uint32_t count = 0;             // 1 or 2
    std::uint64_t interleave_bytes = 0;  // the granule of the address hash that picks a home half
    double link_gbytes_per_second = 0;   // the die-to-die link, each direction (bytes per ns)
    Cycle link_latency = 0;              // added to a read or write served by the other die's half
    // Added to a read some of whose lines only the other die's half holds (its near half lacks
    // them), after the box has streamed to the SM: its last lines are far ones.
    Cycle far_hit_latency = 0;
    // Bytes a far read whose tensor map has an L2 promotion wider than a line sends across the link
    // the other way (towards the serving half), per byte it reads: traffic that competes only with
    // data flowing that way.
    double promotion_request_share = 0;
    // Optional: the die (L2 partition) of each GPC; empty: the first gpcs / count GPCs are die 0's,
    // and so on.
    std::vector<std::uint32_t> of_gpc;
  } dies;

  struct Launch {
    Cycle latency = 0;  // kernel launch -> the first CTAs start
  } launch;

  // CUDA-core pipes: results per cycle per SM (each of the 4 sub-partitions has a quarter); a warp
  // instruction on a pipe of L lanes per sub-partition occupies it for 32 / L cycles.
  struct Pipes {
    std::uint32_t fma_lanes = 0;   // fp32 add/mul/fma
    std::uint32_t alu_lanes = 0;   // integer, logic, compare, min/max
    std::uint32_t mufu_lanes = 0;  // ex2, rcp, rsqrt, ... (multi-function unit)
    std::uint32_t cvt_lanes = 0;   // fp32 -> 16/8-bit conversions
    // Dependent-issue latency of each pipe: a consumer issues this many cycles after its producer.
    std::uint32_t fma_latency = 0, alu_latency = 0, mufu_latency = 0, cvt_latency = 0;
    // FFMA2 / FADD2 / FMUL2 (SM100): one issue slot for two fp32 operations per lane.
    bool paired_fp32 = false;
    bool minmax3 = false;  // FMNMX3: a three-input fp32 max/min (SM100)
  } pipes;

  struct L2 {
    std::string policy;            // the replacement policy, by name (hw/memory/L2Policy: lru, clock, set_lru, set_rrip)
    std::uint64_t bytes = 0;       // capacity
    std::uint32_t line_bytes = 0;  // line size
    // Rows of a tensor per residency block (hw/memory/L2Policy): the granularity at which the
    // model tracks what the L2 holds, a simulation choice, not a hardware figure.
    std::uint32_t block_rows = 8;
    std::uint32_t ways = 0;        // blocks per set of the set-associative policies (set_lru, set_rrip); 0: not given
    // GMEM pages whose physical frames scatter over the sets of the set-associative policies
    // (hw/memory/L2SetIndex; the others have no sets); 0: addresses are physical, folded onto the sets.
    std::uint64_t page_bytes = 0;
    // Aggregate bandwidth of the L2's data arrays to the SMs (all SMs together), in bytes per ns:
    // the L2 runs on its own clock, so in SM cycles it grows as the SM clock falls.
    double gbytes_per_second = 0;
    // A read of lines whose transfer to another SM is still in flight joins it (the L2 request
    // coalescer): it takes no array bandwidth and its data arrives with the earlier transfer's.
    bool coalesce_in_flight = false;
    // How long a transfer stays joinable (with coalesce_in_flight): a read joins another SM's
    // transfer of the line within join_window_cycles of its request plus join_queue_share of the
    // time that request waited at the L2; a later read is read out of the arrays, after the line's
    // fill if one is in flight. 0: joinable while in flight.
    std::uint32_t join_window_cycles = 0;
    double join_queue_share = 0;
    // Which reads may join a transfer: any SM's (false) or only those of an SM of the same GPC
    // (true: l2.join_scope gpc; hw/memory/GpcJoinTable).
    bool join_within_gpc = false;
    // What the crossbar delivers to the SMs in all, coalesced reads included (bytes per ns).
    double delivery_gbytes_per_second = 0;
    // Array bytes a store of one byte takes from the L2's bandwidth (a write is dearer than a
    // read), and a reduction (cp.reduce.async.bulk .add) of one: the read, the add and the write.
    double store_link_cost = 1;
    double reduce_link_cost = 1;
    // Array bytes a line filled from HBM takes per byte (its write into the arrays; a read miss's
    // data reaches the SM with the fill, not read back out): read misses, promoted lines, prefetches.
    double fill_link_cost = 1;
    // Bytes of TMA loads one CPC may have in flight (hw/memory/CpcLoadGate); 0: no limit.
    std::uint64_t cpc_load_bytes_in_flight = 0;
  } l2;

  struct Hbm {
    std::string model;             // the model, by name (hw/memory/HbmModel: fifo_link, loaded_link)
    double gbytes_per_second = 0;  // achievable bandwidth, reads and writes together
    Cycle latency = 0;             // added to an L2 hit's latency for bytes that miss
    // loaded_link only (section hbm.loaded): latency that grows with the HBM's recent load u, the
    // bytes that reached it in the last `window` cycles over what it moves in that time:
    // step_latency * min(1, u / step_load) + queue_latency * u / (1 - u), u at most max_load.
    struct Loaded {
      bool present = false;
      Cycle window = 0;
      Cycle step_latency = 0;
      double step_load = 0;
      Cycle queue_latency = 0;
      double max_load = 0;
    } loaded;
  } hbm;

  struct Warp {
    Cycle issue_cycles = 0;           // issue slot cost of one instruction of one warp
    Cycle named_barrier_latency = 0;  // last bar.sync arrival -> waiting warps resume
    Cycle udiv_latency = 0;  // a u32 division by a run-time divisor as compiled, to its dependent use
  } warp;

  struct Smem {
    std::uint32_t bytes_per_cycle = 0;  // generic ld/st.shared bandwidth per SM (all its warps)
    // One warp's path: each ld/st.shared instruction takes instruction_cycles plus its bytes at
    // warp_bytes_per_cycle (a warp moves 32 x the access width per instruction).
    Cycle instruction_cycles = 0;
    std::uint32_t warp_bytes_per_cycle = 0;
    // fence.proxy.async takes this many cycles of the SM's port (it orders the warp's generic
    // SMEM writes before the async proxy's accesses), from the warp's clock on.
    Cycle proxy_fence_cycles = 0;
  } smem;

  struct MBarrier {
    Cycle arrive_latency = 0;  // arrive issued -> arrival counted on the barrier
    Cycle wakeup_latency = 0;  // phase completes -> a blocked waiter resumes
  } mbarrier;

  struct Tma {
    Cycle issue_cycles = 0;           // warp issue cost of one cp.async.bulk.tensor
    Cycle load_latency = 0;           // end of streaming -> complete_tx lands (L2 hit)
    Cycle store_latency = 0;          // end of streaming -> the store's SMEM read and its global write are done
    Cycle descriptor_fetch_latency = 0;  // added to the first use of a tensor map on an SM in a launch
    std::uint32_t bytes_per_cycle = 0;  // bytes one SM's TMA unit streams per cycle
    double store_bytes_per_cycle = 0;   // bytes a store sends from the SM towards the L2 per cycle (its write path)
    double reduce_bytes_per_cycle = 0;  // the same for a reduction (cp.reduce.async.bulk .add)
    Cycle multicast_extra_latency = 0;  // added to load_latency for a .multicast::cluster load
    std::uint32_t miss_bytes_per_cycle = 0;  // the unit's rate for bytes that miss in the L2 (served by HBM)
    Cycle miss_box_cycles = 0;  // one SM's boxes with L2 misses complete at most one per this many cycles
  } tma;

  struct Tmem {
    std::uint32_t columns = 0;          // 32-bit columns per lane (128 lanes is the ISA's address format)
    Cycle alloc_cycles = 0;             // tcgen05.alloc / dealloc: issue to completion
    Cycle access_latency = 0;           // tcgen05.ld / st: end of transfer -> wait::ld / wait::st passes
    std::uint32_t bytes_per_cycle = 0;  // tcgen05.ld / st bandwidth of one warp's 32-lane quadrant
  } tmem;

  struct Mma {
    Cycle issue_cycles = 0;                    // warp issue cost of one tcgen05.mma / commit / cp
    std::uint32_t f16_flops_per_cycle = 0;     // dense kind::f16 FLOP per cycle per SM (M = 128)
    std::uint32_t tf32_flops_per_cycle = 0;    // dense kind::tf32
    std::uint32_t f8f6f4_flops_per_cycle = 0;  // dense kind::f8f6f4 and kind::mxf8f6f4
    std::uint32_t i8_ops_per_cycle = 0;        // dense kind::i8
    std::uint32_t f4_flops_per_cycle = 0;      // dense kind::mxf4 and kind::mxf4nvf4 (packed FP4)
    Cycle block_scale_latency = 0;             // added to the latency of the block-scaled kinds
    Cycle shift_cycles = 0;                    // tcgen05.shift: the pipe's occupancy
    Cycle shift_latency = 0;                   // tcgen05.shift: pipe start -> rows moved
    std::uint32_t smem_bytes_per_cycle = 0;    // SMEM operand bandwidth the MMA pipe sees
    Cycle latency_ss = 0;                      // pipe start -> D written, beyond N/2: SS, M = 128
    Cycle latency_ss_m64 = 0;                  // same, SS, M = 64
    Cycle latency_ts = 0;                      // same, A from TMEM
    // cta_group::2 (the pair's two pipes run the instruction together), beyond its math time:
    Cycle latency_2cta_ss = 0;                 // SS, M = 256
    Cycle latency_2cta_ss_m128 = 0;            // SS, M = 128 (64 rows per CTA)
    Cycle latency_2cta_ts = 0;                 // TS, M = 256
    Cycle latency_2cta_ts_m128 = 0;            // TS, M = 128
  } mma;

  // SM90 warpgroup MMA (wgmma.mma_async): one tensor pipe per SM that the 4 sub-partitions' tensor
  // cores form together; a warpgroup's m64nNkK instruction occupies it for its math or its SMEM
  // operand time, whichever is longer. Rates 0: the SM has no wgmma (SM100).
  struct Wgmma {
    Cycle issue_cycles = 0;                  // warp issue cost of one wgmma / fence / commit_group
    std::uint32_t f16_flops_per_cycle = 0;   // dense bf16/f16 inputs, f32 accumulate, per SM
    std::uint32_t f8_flops_per_cycle = 0;    // dense e4m3/e5m2 inputs
    std::uint32_t smem_bytes_per_cycle = 0;  // SMEM operand bandwidth the pipe sees
    Cycle latency_ss = 0;                    // pipe start -> accumulators written, beyond the math time: A, B in SMEM
    Cycle latency_rs = 0;                    // the same with A from registers
  } wgmma;

  struct Cluster {
    std::uint32_t max_ctas_portable = 0;  // largest cluster without the non-portable opt-in
    std::uint32_t max_ctas = 0;           // largest cluster with it
    Cycle barrier_latency = 0;            // last barrier.cluster.arrive.relaxed -> waiters resume
    Cycle barrier_release_latency = 0;    // extra for an arrive with .release (the default) semantics, 2 CTAs
    Cycle barrier_release_per_cta = 0;    // added to it per CTA beyond 2
    Cycle remote_arrive_latency = 0;      // mbarrier.arrive.shared::cluster issue -> lands on the peer's barrier
    Cycle remote_arrive_latency_pair = 0; // the same to the other SM of the own TPC
    Cycle dsmem_load_latency = 0;         // ld.shared::cluster issue -> value in the register
    Cycle dsmem_load_latency_pair = 0;    // the same from the other SM of the own TPC
    Cycle dsmem_store_latency = 0;        // st.shared::cluster issue -> bytes in the peer's SMEM
  } cluster;

  // The board's power and the clock its limit allows (power/PowerModel). Optional: limit_w 0
  // (no `power` section) means no power model. Energies are dynamic energy per event at the
  // maximum clock's voltage; the SM's own units (tensor pipe, CUDA-core pipes) scale with
  // energy_scale(clock), the L2, HBM and TMA transfers do not.
  struct Power {
    double limit_w = 0;                 // the board's power limit
    double idle_w = 0;                  // the board with no kernel (resident idle SMs add nothing)
    double tensor_f16_flop_pj = 0;      // per FLOP of 16-bit (and tf32) MMA operands, wgmma or tcgen05
    double tensor_f8_flop_pj = 0;       // per FLOP of 8-bit MMA operands
    double fma_instruction_pj = 0;      // per warp-level instruction on each CUDA-core pipe
    double alu_instruction_pj = 0;
    double mufu_instruction_pj = 0;
    double cvt_instruction_pj = 0;
    double smem_byte_pj = 0;            // per byte warps load or store with ld/st.shared
    double l2_byte_pj = 0;              // per byte between the L2 and the SMs (loads and stores)
    double hbm_byte_pj = 0;             // per byte between HBM and the L2
    double tma_op_pj = 0;               // per TMA load, store or prefetch
    double max_clock_ghz = 0;           // the SM clock without tensor work
    double tensor_clock_ghz = 0;        // the most the SM clock gives while a tensor pipe works
    double min_clock_ghz = 0;           // the controller's floor
    double step_mhz = 0;                // the controller's clock step
    double period_ms = 0;               // the controller's period (one step per period)
    std::string clock_controller;       // its model (power/ClockController): limit_step, fixed
    // (SM clock GHz, dynamic energy factor) in descending clocks: the factor at a clock between
    // two points is interpolated, beyond the last point extrapolated along the last segment.
    std::vector<std::pair<double, double>> energy_scale;
  } power;

  // How sure the config's values are (bwsim fidelity). Optional: no section, no values listed.
  // Each listed value (a dotted key of a numeric value) has a provenance tag: M measured on this
  // chip, D derived from measurements, H100 a Hopper measurement reused, E an estimate; the
  // fidelity report varies it by its tag's band (a relative +-).
  struct Uncertainty {
    struct Listed {
      std::string key;    // dotted config key
      std::string tag;    // provenance
      std::string value;  // the value as configured (after any --set), e.g. "294"
    };
    std::vector<std::pair<std::string, double>> bands;  // tag -> band
    std::vector<Listed> keys;                            // in the file's order
    double band(const std::string& tag) const;
  } uncertainty;
};

// Loads and validates a config file. `overrides` are "dotted.key=value" strings applied before
// validation (e.g. "tma.load_latency=400"); each must name an existing key.
// Throws ConfigError naming the file and the key path on any problem.
HardwareConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Every scalar value of the config at `path` after `overrides`, as (dotted key, text) in the
// file's order (sequences and the uncertainty section left out): what a perturbation can vary.
std::vector<std::pair<std::string, std::string>> config_values(const std::string& path,
                                                               const std::vector<std::string>& overrides = {});

// Same, from YAML text (tests and embedded configs); `origin` names it in messages.
HardwareConfig parse_config(const std::string& yaml_text, const std::string& origin,
                            const std::vector<std::string>& overrides = {});

}  // namespace bwsim
