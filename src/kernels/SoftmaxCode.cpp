#include "bwsim/kernels/SoftmaxCode.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <vector>

namespace bwsim {
namespace {

using Value = CoreBlock::Value;
constexpr std::uint32_t kPartials = 8;  // partial maxima and sums per row

// The work of N scores (one, or a pair): fp32 ops as one FFMA2/FADD2 for a pair of paired code,
// else one op per score; ALU ops one per score; and exp2 in software on them.
template <std::size_t N>
struct ScoreWriter {
  using Values = std::array<Value, N>;
  CoreBlock& b;
  bool paired;
  // One op per score reading a[k] and c[k] (c: an operand per score, or none).
  Values fp32(Values a, Values c = {}) {
    Values r;
    if (N == 2 && paired) {
      r.fill(b.fma2({a[0], a[1], c[0]}));
      return r;
    }
    for (std::size_t k = 0; k < N; ++k) r[k] = b.fma({a[k], c[k]});
    return r;
  }
  Values alu(Values a, Values c = {}) {
    Values r;
    for (std::size_t k = 0; k < N; ++k) r[k] = b.alu({a[k], c[k]});
    return r;
  }
  Values exp2(Values x) {
    const Values clamped = alu(x);           // max(x, -127): FMNMX
    const Values j = fp32(clamped);          // x + 1.5 x 2^23 rounded down: FADD.RM
    const Values f = fp32(clamped, fp32(j)); // x - (that - 1.5 x 2^23): 2 FADD
    Values q = fp32(f);                      // 2^f on [0, 1) by Horner: 3 FFMA
    q = fp32(q, f);
    q = fp32(q, f);
    return alu(j, q);                        // j << 23 added to the bits: one LEA
  }
};

}  // namespace

std::function<bool(std::uint32_t)> fa4_emulated_pairs(std::uint32_t columns, std::uint32_t freq, std::uint32_t res,
                                                       std::uint32_t start_fragment) {
  if (freq == 0 || res > freq) throw std::invalid_argument(fmt::format("emulation every {} scores, {} of them", freq, res));
  const std::uint32_t fragments = columns / 32;
  return [=](std::uint32_t score) {
    const std::uint32_t fragment = score / 32, k = score % 32 & ~1u;  // the pair's first element in its fragment
    if (fragment < start_fragment || fragment + 1 >= fragments) return false;
    return k % freq >= freq - res;
  };
}

namespace {

// 8 partial results over the row (i mod 8), then a tree of 7: no serial chain over the row. With
// `second`, each element is a pair (row[i], second[i]) that one paired op takes.
Value reduce(CoreBlock& b, const std::vector<Value>& row, CoreOp op, const std::vector<Value>* second = nullptr) {
  std::array<Value, kPartials> part{};
  for (std::size_t i = 0; i < row.size(); ++i) {
    // (A pair's first value stands for the pair: its two values come from adjacent instructions.)
    const Value other = second ? (*second)[i] : Value{};
    part[i % kPartials] = i < kPartials ? row[i] : b.op(op, {part[i % kPartials], row[i], other});
  }
  for (std::uint32_t w = kPartials / 2; w >= 1; w /= 2)
    for (std::uint32_t k = 0; k < w; ++k) part[k] = b.op(op, {part[k], part[k + w]});
  return second ? b.fma({part[0]}) : part[0];  // a pair's two halves added: one FADD
}

// The row max with the running max `m_old` by three-input FMNMX3 (pipes.minmax3): 8 partial
// maxima taking two scores per instruction, then the 8 and m_old in a tree of 3 + 1 (the sm_100a
// compile of the twin: 61 FMNMX3 + 6 FMNMX for 128 scores; this writes 64 FMNMX3).
Value max3(CoreBlock& b, const std::vector<Value>& row, Value m_old) {
  std::array<Value, kPartials> part{};
  for (std::size_t i = 0; i < kPartials; ++i) part[i] = row[i];
  for (std::size_t i = kPartials; i < row.size(); i += 2) {
    Value& p = part[(i / 2) % kPartials];
    p = i + 1 < row.size() ? b.alu({p, row[i], row[i + 1]}) : b.alu({p, row[i]});
  }
  const Value a = b.alu({part[0], part[1], part[2]}), c = b.alu({part[3], part[4], part[5]}),
              d = b.alu({part[6], part[7], m_old});
  return b.alu({a, c, d});
}

}  // namespace

CoreBlock softmax_row_block(const SoftmaxRowCode& code, const HardwareConfig& config) {
  if (code.columns < 2 * kPartials || code.columns % 2)
    throw std::invalid_argument(fmt::format("a softmax row of {} scores: an even count of at least {} is needed",
                                            code.columns, 2 * kPartials));
  CoreBlock b(fmt::format("softmax row x{}", code.columns), CoreBlock::Order::AsCompiled);
  std::vector<Value> s(code.columns);
  for (Value& v : s) v = b.input();
  const Value m_old = b.input(), sum_old = b.input(), scale = b.input();
  const Value m = config.pipes.minmax3 ? max3(b, s, m_old) : b.alu({m_old, reduce(b, s, CoreOp::Alu)});
  Value neg_mc = b.fma({m, scale});                // -(max * scale)
  const Value x_corr = b.fma({m_old, scale, neg_mc});  // m_old * scale - m * scale
  Value corr = b.mufu({x_corr});                    // its exp2
  if (code.stale_max) {  // the max grew by at most the threshold: keep the old one (FSETP, 3 FSEL)
    const Value keep = b.alu({x_corr});
    b.alu({keep, m, m_old});  // the row's max for the next tile
    neg_mc = b.alu({keep, neg_mc});
    corr = b.alu({keep, corr});
  }
  ScoreWriter<2> pairs{b, code.paired};
  std::vector<Value> p(code.columns);
  for (std::uint32_t i = 0; i < code.columns; i += 2) {
    const std::array<Value, 2> x = pairs.fp32({s[i], s[i + 1]}, {neg_mc, neg_mc});  // s * scale - m * scale
    const bool soft[2] = {code.emulate && code.emulate(i), code.emulate && code.emulate(i + 1)};
    if (code.paired && soft[0] != soft[1])
      throw std::invalid_argument(fmt::format("paired softmax code emulates score {} but not {}", soft[0] ? i : i + 1,
                                              soft[0] ? i + 1 : i));
    std::array<Value, 2> e{};
    if (code.paired && soft[0]) {
      e = pairs.exp2(x);
    } else {
      for (std::uint32_t h = 0; h < 2; ++h) e[h] = soft[h] ? ScoreWriter<1>{b, false}.exp2({x[h]})[0] : b.mufu({x[h]});
    }
    p[i] = e[0];
    p[i + 1] = e[1];
  }
  if (code.paired) {  // FADD2 over the pairs into 8 pairs of partial sums
    std::vector<Value> even(code.columns / 2), odd(code.columns / 2);
    for (std::uint32_t k = 0; k < code.columns / 2; ++k) even[k] = p[2 * k], odd[k] = p[2 * k + 1];
    b.fma({sum_old, corr, reduce(b, even, CoreOp::Fma2, &odd)});
  } else {
    b.fma({sum_old, corr, reduce(b, p, CoreOp::Fma)});  // l * corr + the row sum
  }
  for (std::uint32_t i = 0; i < code.columns; i += 2) b.cvt({p[i], p[i + 1]});  // F2FP: pairs to bf16x2
  b.finish(config);
  return b;
}

CoreBlock o_rescale_block(std::uint32_t columns, const HardwareConfig& config) {
  CoreBlock b(fmt::format("rescale O x{}", columns), CoreBlock::Order::AsCompiled);
  const Value scale = b.input();
  const bool paired = config.pipes.paired_fp32;
  for (std::uint32_t c = 0; c < columns; c += paired ? 2 : 1) b.op(paired ? CoreOp::Fma2 : CoreOp::Fma, {b.input(), scale});
  b.finish(config);
  return b;
}

CoreBlock o_normalize_block(std::uint32_t columns, const HardwareConfig& config) {
  CoreBlock b(fmt::format("normalize O x{}", columns), CoreBlock::Order::AsCompiled);
  const Value inv = b.mufu({b.input()});  // 1 / row sum: MUFU.RCP
  const bool paired = config.pipes.paired_fp32;
  for (std::uint32_t c = 0; c < columns; c += 2) {
    Value o[2];
    if (paired) {
      o[0] = o[1] = b.fma2({b.input(), b.input(), inv});
    } else {
      for (Value& v : o) v = b.fma({b.input(), inv});
    }
    b.cvt({o[0], o[1]});  // F2FP: the pair to bf16x2 / f16x2
  }
  b.finish(config);
  return b;
}

}  // namespace bwsim
