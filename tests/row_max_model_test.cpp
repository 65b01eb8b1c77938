// Timing mode's rescale model (kernels/RowMaxModel): without a threshold it reproduces the
// record statistics of i.i.d. scores (a row's max grows at tile j with probability 1 / (j + 1)),
// a threshold removes rescales as the normal tail says, and the normal quantile it samples with.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "bwsim/kernels/RowMaxModel.hpp"

namespace bwsim {
namespace {

// How often a warp of 32 rows rescales at each of tiles 1..15, over `runs` units.
std::vector<double> rescale_rates(const RowMaxModel::Params& p, std::uint32_t runs) {
  RowMaxModel model(p);
  std::vector<double> rate(16, 0.0);
  for (std::uint32_t u = 0; u < runs; ++u) {
    model.restart(0x1234 + u * 0x9e37ull, 16);
    for (std::uint32_t j = 1; j < 16; ++j) rate[j] += model.rescales(j) ? 1.0 / runs : 0.0;
  }
  return rate;
}

TEST(RowMaxModelTest, WithoutAThresholdAWarpRescalesAsRecordsOfIidScoresSay) {
  const std::vector<double> rate = rescale_rates({}, 4000);
  for (std::uint32_t j = 1; j < 16; ++j) {
    const double expected = 1 - std::pow(static_cast<double>(j) / (j + 1), 32.0);  // any of 32 rows
    EXPECT_NEAR(rate[j], expected, 0.03) << "tile " << j;
  }
}

TEST(RowMaxModelTest, AThresholdRemovesTheRescalesTheNormalTailRules) {
  // randn scores (std 1): a max growing by 8 / log2(e) = 5.5 standard deviations past the max of
  // 128 never happens in practice: no rescale in 15 tiles of 4000 units.
  for (double r : rescale_rates({.threshold = 8.0}, 4000)) EXPECT_EQ(r, 0.0);
  // A threshold of 1 (0.69 std): fewer rescales over the 15 tiles than without one, still some.
  auto total = [](const std::vector<double>& r) { return std::accumulate(r.begin(), r.end(), 0.0); };
  const double none = total(rescale_rates({}, 4000)), one = total(rescale_rates({.threshold = 1.0}, 4000));
  EXPECT_GT(one, 1.0);
  EXPECT_LT(one, none * 0.8);
  // Wider scores (std 8): the same threshold is a smaller step, so rescales come back.
  EXPECT_GT(rescale_rates({.score_std = 8.0, .threshold = 8.0}, 4000)[1], 0.5);
}

// The rescale tiles of 128-tile units, as the model drew them tile by tile when the warp asked at
// each (its code before the unit's tiles were drawn up front, 2026-11-29): the same draws.
TEST(RowMaxModelTest, AUnitsRescalesAreThoseOfTheTileByTileDraws) {
  struct Case {
    double threshold;
    std::uint64_t seed;
    std::vector<std::uint32_t> tiles;
  };
  const Case cases[] = {
      {0.0, 1, {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 16,  17,  19,  20,
                22, 23, 25, 28, 29, 30, 31, 32, 35, 37, 38, 39, 42, 45, 49, 50,  52,  54,
                55, 56, 62, 63, 69, 71, 72, 74, 76, 77, 82, 92, 97, 107, 114, 117, 118, 127}},
      {0.0, 12345, {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 16, 17,  20,  22,
                    23, 25, 26, 27, 28, 30, 31, 33, 34, 35, 36, 37, 38, 42, 45, 50, 51,  52,  55,
                    59, 63, 64, 66, 67, 68, 69, 76, 78, 80, 81, 93, 95, 96, 105, 106, 120, 121}},
      {1.0, 1, {1, 2, 3, 4, 7, 8, 9, 10, 11, 16, 18, 19, 23, 24, 29, 31, 32, 42, 45, 59, 62, 73, 84, 89, 97, 125}},
      {1.0, 12345, {1,  2,  3,  4,  5,  6,  9,  10, 11, 14, 18, 20, 25, 27,
                    28, 31, 32, 36, 37, 41, 43, 48, 62, 79, 96, 100, 121, 123}},
      {8.0, 1, {}},
  };
  for (const Case& c : cases) {
    RowMaxModel model({.threshold = c.threshold});
    model.restart(c.seed, 128);
    std::vector<std::uint32_t> got;
    for (std::uint32_t t = 0; t < 128; ++t)
      if (model.rescales(t)) got.push_back(t);
    EXPECT_EQ(got, c.tiles) << "threshold " << c.threshold << ", seed " << c.seed;
  }
}

// A unit's rescales are drawn when it starts: a longer unit (past the inline bitmap's 512 tiles)
// draws the same rescales over the tiles they share, and none past its end.
TEST(RowMaxModelTest, AUnitsRescalesDoNotDependOnItsLength) {
  for (const RowMaxModel::Params& p : {RowMaxModel::Params{}, RowMaxModel::Params{.threshold = 1.0}}) {
    RowMaxModel a(p), b(p);
    std::uint32_t seen = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      a.restart(seed, 512);
      b.restart(seed, 700);
      for (std::uint32_t t = 0; t < 512; ++t) {
        EXPECT_EQ(a.rescales(t), b.rescales(t)) << "seed " << seed << " tile " << t;
        seen += a.rescales(t);
      }
      EXPECT_FALSE(a.rescales(0));
      EXPECT_FALSE(a.rescales(512));
      EXPECT_FALSE(b.rescales(700));
      b.restart(seed, 20);  // back to the inline bitmap
      for (std::uint32_t t = 0; t < 20; ++t) EXPECT_EQ(a.rescales(t), b.rescales(t));
    }
    EXPECT_GT(seen, 20u);  // rescales happen (the first tiles' are likely)
  }
}

TEST(RowMaxModelTest, TheUpperQuantileInvertsTheNormalTail) {
  EXPECT_NEAR(RowMaxModel::upper_quantile(0.5), 0.0, 1e-9);
  EXPECT_NEAR(RowMaxModel::upper_quantile(0.025), 1.959963985, 1e-8);
  EXPECT_NEAR(RowMaxModel::upper_quantile(0.975), -1.959963985, 1e-8);
  for (double z : {3.0, 6.0, 9.0}) EXPECT_NEAR(RowMaxModel::upper_quantile(0.5 * std::erfc(z / std::sqrt(2.0))), z, 1e-6 * z);
}

}  // namespace
}  // namespace bwsim
