#include "bwsim/kernels/RowMaxModel.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "bwsim/core/Bits.hpp"

namespace bwsim {

RowMaxModel::RowMaxModel(const Params& p)
    : p_(p),
      // x = s scale log2(e): a threshold of t in x is t / (log2(e) score_std) in standard units.
      threshold_z_(p.threshold / (std::numbers::log2e * p.score_std)) {
  if (p.rows > kMaxRows) throw std::invalid_argument("RowMaxModel: at most 32 rows (one warp's)");
}

void RowMaxModel::restart(std::uint64_t seed, std::uint32_t tiles) {
  state_ = seed;
  tiles_ = tiles;
  std::uint64_t* bits = inline_.data();
  if (tiles > kInlineTiles) {
    more_.assign((static_cast<std::size_t>(tiles) + 63) / 64, 0);
    bits = more_.data();
  } else {
    inline_.fill(0);
  }
  Rows rows;
  for (std::uint32_t r = 0; r < p_.rows; ++r) {
    rows.m_ref[r] = -std::numeric_limits<double>::infinity();
    draw_max(rows, r, 1.0);  // tile 0's max
    schedule(rows, r, 0);
  }
  // Tile by tile as the warp asks, skipping to the soonest row's next rescale.
  while (rows.soonest < tiles) {
    const std::uint32_t tile = rows.soonest;
    rows.soonest = kNever;
    for (std::uint32_t r = 0; r < p_.rows; ++r) {
      if (rows.next[r] <= tile) {
        draw_max(rows, r, rows.exceed[r]);
        schedule(rows, r, tile);
      } else {
        rows.soonest = std::min(rows.soonest, rows.next[r]);
      }
    }
    bits[tile / 64] |= 1ull << (tile % 64);
  }
}

double RowMaxModel::uniform() {
  state_ += 0x9e3779b97f4a7c15ull;
  return (static_cast<double>(mix64(state_) >> 11) + 0.5) * 0x1.0p-53;
}

double RowMaxModel::exceed_probability(double z) const {
  const double tail = 0.5 * std::erfc(z / std::numbers::sqrt2);  // one score above z
  return -std::expm1(p_.keys * std::log1p(-tail));                // 1 - (1 - tail)^keys
}

double RowMaxModel::draw_above(double z, double q) {
  // P(max > m | max > z) = V: 1 - Phi(m)^keys = V q, so the upper tail of one score at m is
  // 1 - (1 - V q)^(1 / keys).
  const double tail = -std::expm1(std::log1p(-uniform() * q) / p_.keys);
  return std::max(z, upper_quantile(tail));
}

// Without a threshold the draw stays in probability space: the new max m has P(tile max > m) =
// V q for the same uniform V that draw_above() turns into m, so no normal tail or quantile is
// evaluated (the same draws, without their rounding).
void RowMaxModel::draw_max(Rows& rows, std::uint32_t row, double q) {
  if (threshold_z_ == 0) {
    rows.exceed[row] = uniform() * q;
    return;
  }
  rows.m_ref[row] = draw_above(rows.m_ref[row] + threshold_z_, q);
  rows.exceed[row] = exceed_probability(rows.m_ref[row] + threshold_z_);
}

void RowMaxModel::schedule(Rows& rows, std::uint32_t row, std::uint32_t tile) {
  const double q = rows.exceed[row];
  // Tiles until the first that exceeds: geometric, at least 1.
  const double wait = q > 0 ? std::ceil(std::log(uniform()) / std::log1p(-q)) : HUGE_VAL;
  rows.next[row] =
      wait < static_cast<double>(kNever - tile) ? tile + std::max(1u, static_cast<std::uint32_t>(wait)) : kNever;
  rows.soonest = std::min(rows.soonest, rows.next[row]);
}

// Acklam's rational approximation of the normal quantile (relative error below 1.2e-9), in the
// lower tail for the small probabilities the maxima need.
double RowMaxModel::upper_quantile(double tail) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  auto lower = [&](double pr) {  // the quantile of probability pr <= 0.5
    if (pr < 0.02425) {
      const double t = std::sqrt(-2 * std::log(pr));
      return (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) /
             ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1);
    }
    const double t = pr - 0.5, r = t * t;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * t /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  };
  return tail <= 0.5 ? -lower(tail) : lower(1 - tail);
}

}  // namespace bwsim
