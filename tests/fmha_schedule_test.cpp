// The fmha kernel's work order (kernels/FmhaSchedule): the natural order, FlashAttention-4's LPT
// order with its L2 sections, variable lengths, and persistent workers, by hand.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "bwsim/kernels/FmhaSchedule.hpp"

namespace bwsim {
namespace {

using Unit = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;  // b, h, qb, tiles
std::vector<Unit> units(const FmhaSchedule& s) {
  std::vector<Unit> u;
  for (const FmhaWorkUnit& w : s.order()) u.emplace_back(w.b, w.h, w.qb, w.kv_tiles);
  return u;
}

TEST(FmhaScheduleTest, NaturalOrderRunsTheQueryBlocksOfAHeadInTurn) {
  // 2 heads x 600 tokens: 3 query blocks each (256 rows), causal: 2, 4, 5 K/V tiles.
  const FmhaSchedule s({.lens = {600}, .heads = 2, .seqlen = 600, .causal = true});
  EXPECT_EQ(units(s), (std::vector<Unit>{{0, 0, 0, 2}, {0, 0, 1, 4}, {0, 0, 2, 5}, {0, 1, 0, 2}, {0, 1, 1, 4},
                                         {0, 1, 2, 5}}));
  EXPECT_EQ(s.ctas(), 6u);  // one CTA per unit
}

TEST(FmhaScheduleTest, LptRunsTheLongestBlocksFirstInsideL2Sections) {
  // 1024 tokens, head dims 128/128: a head's K and V are 1024 x 256 x 2 = 512 KiB, 100 fit in
  // 50 MiB, so one section of 64 holds both heads: query blocks from the last, heads fastest.
  const FmhaSchedule s({.lens = {1024}, .heads = 2, .seqlen = 1024, .causal = true, .lpt = true});
  EXPECT_EQ(s.l2_section(), 64u);
  EXPECT_EQ(units(s), (std::vector<Unit>{{0, 0, 3, 8}, {0, 1, 3, 8}, {0, 0, 2, 6}, {0, 1, 2, 6}, {0, 0, 1, 4},
                                         {0, 1, 1, 4}, {0, 0, 0, 2}, {0, 1, 0, 2}}));
  // 32768 tokens: 16 MiB per head, 3 fit, rounded down to 2 per section; 3 heads make a
  // section of heads 0-1 (128 blocks each) and a remainder section of head 2.
  const FmhaSchedule big({.lens = {32768}, .heads = 3, .seqlen = 32768, .causal = true, .lpt = true});
  EXPECT_EQ(big.l2_section(), 2u);
  const std::vector<Unit> u = units(big);
  EXPECT_EQ(u[0], (Unit{0, 0, 127, 256}));
  EXPECT_EQ(u[1], (Unit{0, 1, 127, 256}));
  EXPECT_EQ(u[2], (Unit{0, 0, 126, 254}));
  EXPECT_EQ(u[255], (Unit{0, 1, 0, 2}));
  EXPECT_EQ(u[256], (Unit{0, 2, 127, 256}));
  EXPECT_EQ(u[383], (Unit{0, 2, 0, 2}));
}

TEST(FmhaScheduleTest, ShorterSequencesHaveFewerUnitsAndPersistentWorkersStride) {
  // Lengths 300 and 40 (padded 300): 2 + 1 blocks (the second sequence has no block 1);
  // non-causal, every unit reads all its keys.
  const FmhaSchedule s({.lens = {300, 40}, .heads = 1, .seqlen = 300, .lpt = true, .workers = 2});
  EXPECT_EQ(units(s), (std::vector<Unit>{{0, 0, 1, 3}, {0, 0, 0, 3}, {1, 0, 0, 1}}));
  EXPECT_EQ(s.ctas(), 2u);
  EXPECT_EQ(s.unit(0, 1), &s.order()[2]);  // worker 0: units 0, 2
  EXPECT_EQ(s.unit(1, 1), nullptr);        // worker 1: unit 1 only
  EXPECT_EQ(s.index(0, 1), 2u);
}

}  // namespace
}  // namespace bwsim
