#pragma once
// What the attention kernels (fmha, fmha_bwd) share besides their operand forms
// (AttentionOperands.hpp): the shape options, their checks, random inputs and the TMEM register
// buffers of their warps.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernel/Warp.hpp"

namespace bwsim::attention {

// batch x heads (with kv_heads K/V heads) sequences of seqlen tokens, or of the lengths seqlens
// (then batch = their count and seqlen their maximum, the tensors' padded length).
struct Shape {
  std::uint32_t batch = 2, heads = 4, kv_heads = 0, seqlen = 1000;
  std::vector<std::uint32_t> seqlens;
};

// --batch, --heads, --kv-heads, --seqlen, --seqlens: their descriptions (then the kernel's own,
// `then`) and their parse.
std::vector<KernelParam> shape_params(std::vector<KernelParam> then);
Shape shape_from_cli(const KernelArgs& a);

// An InputError for an impossible shape: no sequences or heads, lengths outside 1..seqlen,
// query heads that do not split over the K/V heads, or a grid of 2^31 CTAs or more at
// `ctas_per_head` CTAs per sequence and head.
void validate_shape(const Shape& s, std::uint64_t ctas_per_head);

// A warp's registers for tcgen05.ld / st: its own in functional mode; in timing mode no data
// moves (the span only gives the access's size), so every warp shares one buffer nothing writes,
// rather than each allocating and zeroing its own.
std::span<std::uint32_t> tmem_registers(const Warp& w, std::vector<std::uint32_t>& own, std::size_t n);

// Random inputs in [-range, range), fp32-rounded to `t` (16-bit).
void fill_random(std::span<std::byte> bytes, DataType t, std::uint32_t seed, float range);

}  // namespace bwsim::attention
