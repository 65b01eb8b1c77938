#include "bwsim/kernels/AttentionBackwardCode.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <vector>

namespace bwsim {
namespace {

using Value = CoreBlock::Value;

// One fp32 op on a pair of values: FFMA2-class with paired fp32, else one op each.
std::array<Value, 2> pair_op(CoreBlock& b, bool paired, std::array<Value, 2> x, Value y = {}, Value z = {}) {
  if (paired) {
    const Value r = b.fma2({x[0], x[1], y});
    return {r, r};
  }
  return {b.fma({x[0], y, z}), b.fma({x[1], y, z})};
}

void check_columns(std::uint32_t columns, const char* what) {
  if (columns < 16 || columns % 2)
    throw std::invalid_argument(fmt::format("{} of {} values: an even count of at least 16 is needed", what, columns));
}

}  // namespace

CoreBlock bwd_p_block(std::uint32_t columns, bool masked, const HardwareConfig& config) {
  check_columns(columns, "a row of P");
  CoreBlock b(fmt::format("P row x{}{}", columns, masked ? " masked" : ""), CoreBlock::Order::AsCompiled);
  const bool paired = config.pipes.paired_fp32;
  const Value scale = b.input();
  for (std::uint32_t i = 0; i < columns; i += 2) {
    std::array<Value, 2> x = pair_op(b, paired, {b.input(), b.input()}, scale, b.input());  // s * scale - lse
    if (masked)
      for (Value& v : x) v = b.alu({v});  // the mask's select to -inf
    const Value p0 = b.mufu({x[0]}), p1 = b.mufu({x[1]});
    b.cvt({p0, p1});  // F2FP: the pair to bf16x2 for TMEM
  }
  b.finish(config);
  return b;
}

CoreBlock bwd_ds_block(std::uint32_t columns, const HardwareConfig& config) {
  check_columns(columns, "a row of dS");
  CoreBlock b(fmt::format("dS row x{}", columns), CoreBlock::Order::AsCompiled);
  const bool paired = config.pipes.paired_fp32;
  for (std::uint32_t i = 0; i < columns; i += 2) {
    const std::array<Value, 2> diff = pair_op(b, paired, {b.input(), b.input()}, b.input());  // dP - D
    const std::array<Value, 2> ds = pair_op(b, paired, diff, b.input());                      // times P
    b.cvt({ds[0], ds[1]});
  }
  b.finish(config);
  return b;
}

CoreBlock bwd_dot_block(std::uint32_t columns, const HardwareConfig& config) {
  check_columns(columns, "a row of D");
  CoreBlock b(fmt::format("D row x{}", columns), CoreBlock::Order::AsCompiled);
  const bool paired = config.pipes.paired_fp32;
  constexpr std::uint32_t kPartials = 8;
  std::array<Value, kPartials> part{};
  for (std::uint32_t i = 0; i < columns; i += 2) {
    const Value o = b.input(), d_o = b.input();  // a bf16x2 register of each
    const std::array<Value, 2> of{b.alu({o}), b.alu({o})}, dof{b.alu({d_o}), b.alu({d_o})};
    Value& acc = part[(i / 2) % kPartials];
    if (paired) {
      acc = b.fma2({of[0], dof[0], acc});
    } else {
      acc = b.fma({of[0], dof[0], acc});
      acc = b.fma({of[1], dof[1], acc});
    }
  }
  for (std::uint32_t w = kPartials / 2; w >= 1; w /= 2)
    for (std::uint32_t k = 0; k < w; ++k) part[k] = b.fma({part[k], part[k + w]});
  if (paired) b.fma({part[0]});  // the pair's halves
  b.fma({b.input()});            // LSE * log2(e)
  b.finish(config);
  return b;
}

CoreBlock bwd_convert_block(std::uint32_t columns, const HardwareConfig& config) {
  check_columns(columns, "a converted row");
  CoreBlock b(fmt::format("scale and convert x{}", columns), CoreBlock::Order::AsCompiled);
  const bool paired = config.pipes.paired_fp32;
  const Value scale = b.input();
  for (std::uint32_t i = 0; i < columns; i += 2) {
    const std::array<Value, 2> v = pair_op(b, paired, {b.input(), b.input()}, scale);
    b.cvt({v[0], v[1]});
  }
  b.finish(config);
  return b;
}

}  // namespace bwsim
