#pragma once
// A tcgen05.mma as the tensor core sees it once issued: its kind, its decoded instruction and
// SMEM descriptors, its TMEM operands and its variant (.ws, .sp, .block_scale, cta_group::2).
#include <cstdint>
#include <string_view>

#include "bwsim/core/Cycle.hpp"

#include "bwsim/hw/tensor/sm100/Tmem.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {

// tcgen05.mma.ws's .collector::bN::op: what the instruction does with B collector buffer N (PTX:
// fill keeps the B it reads from SMEM there; use reads B from it; lastuse reads it, then frees it;
// discard, the default with b0, reads SMEM and frees the buffer).
enum class CollectorOp : std::uint8_t { Discard, Fill, Use, LastUse };
struct Collector {
  std::uint32_t buffer = 0;  // b0..b3
  CollectorOp op = CollectorOp::Discard;
};
std::string_view name_of(CollectorOp op);

// A decoded, validated tcgen05.mma.
struct MmaInstr {
  MmaKind kind = MmaKind::F16;
  InstrDescriptorFields f;
  SmemDescriptorFields a, b;  // `a` unused when A comes from TMEM
  bool a_from_tmem = false;
  TmemAddr a_tmem, d;
  bool accumulate = false;  // enable-input-d
  bool pair = false;        // cta_group::2: issued by the pair's leader, runs on both SMs
  // .block_scale: the scale factors' TMEM addresses (each CTA's own TMEM on a pair) and .scale_vec.
  bool block_scale = false;
  TmemAddr scale_a, scale_b;
  ScaleVec scale_vec = ScaleVec::X1;
  // .sp: A holds the stored half of a logical K twice the kind's (f.sparse), placed by the
  // metadata at `meta` (hw/tensor/sm100/SparseMetadata.hpp).
  bool sp = false;
  TmemAddr meta;
  // .ws (weight-stationary): M = 32, 64 or 128 on one CTA, D folded over the lanes (accumulator_cell);
  // B through a collector buffer.
  bool ws = false;
  Collector collector;
  std::uint32_t logical_k() const { return mma_k(kind) * (sp ? 2 : 1); }
  bool b_from_collector() const { return ws && (collector.op == CollectorOp::Use || collector.op == CollectorOp::LastUse); }
  // TMEM columns of D: N, folded by Layout B (cta_group::2 M = 128) and the .ws layouts.
  std::uint32_t d_columns() const { return ws ? f.n * f.m / 128 : pair && f.m == 128 ? f.n / 2 : f.n; }
  // Each CTA's rows of A and of B (a pair splits both); A's TMEM lanes (M = 64 reads all 128, the
  // accumulator layout's) and columns when it is there.
  std::uint32_t a_rows() const { return pair ? f.m / 2 : f.m; }
  std::uint32_t b_rows() const { return pair ? f.n / 2 : f.n; }
  std::uint32_t a_tmem_lanes() const { return a_rows() == 64 ? kTmemLanes : a_rows(); }
  std::uint32_t a_columns() const { return a_from_tmem ? mma_k(kind) * operand_element_bits(kind, f.a_type) / 32 : 0; }
};

// What one MMA takes of its SM's tensor pipe, from its shape and the config alone (MmaPipe::cost):
// its math and SMEM cycles, the interval it holds the pipe (their maximum), the cycles from its
// math's end to D complete, and its useful FLOP.
struct MmaCost {
  Cycle math = 0, interval = 0, latency = 0;
  double flops = 0;
};

}  // namespace bwsim
