// The warp-specialized GEMM end to end: correct numbers for every input type, for shapes that are
// not multiples of the tile, across CTAs; injected kernel bugs are caught by the check.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/kernels/Gemm.hpp"

namespace bwsim {
namespace {

GemmResult gemm(const GemmParams& p, Mode mode = Mode::Functional) {
  return run_gemm(test::b200_config(), SimOptions{.mode = mode}, p, true);
}

struct TypeCase {
  DataType ab, d;
};

class GemmTypes : public testing::TestWithParam<TypeCase> {};

TEST_P(GemmTypes, MatchesTheReferenceOnAPartialTileShape) {
  // 200 x 300 x 160: two M tiles (the second 72 rows), two N tiles (the second 44 columns), and
  // a K that leaves the last k-tile partly out of bounds: loads zero-fill, stores clip.
  const GemmParams p{.m = 200, .n = 300, .k = 160, .ab_type = GetParam().ab, .d_type = GetParam().d};
  const GemmResult r = gemm(p);
  ASSERT_TRUE(r.checked);
  EXPECT_TRUE(r.matches) << r.detail;
  EXPECT_EQ(r.tiles, 4u);
}

INSTANTIATE_TEST_SUITE_P(Inputs, GemmTypes,
                         testing::Values(TypeCase{DataType::BF16, DataType::F32}, TypeCase{DataType::F16, DataType::F32},
                                         TypeCase{DataType::E4M3, DataType::F32}, TypeCase{DataType::E5M2, DataType::BF16},
                                         TypeCase{DataType::BF16, DataType::BF16}),
                         [](const auto& info) {
                           return std::string(name_of(info.param.ab)) + "_to_" + std::string(name_of(info.param.d));
                         });

TEST(Gemm, PersistentCtasSplitTheTiles) {
  const GemmResult r = gemm({.m = 384, .n = 512, .k = 128, .tile_n = 128, .ctas = 4});
  EXPECT_TRUE(r.matches) << r.detail;
  EXPECT_EQ(r.tiles, 12u);
  EXPECT_EQ(r.run.ctas, 4u);
}

TEST(Gemm, MissingZeroInitOfTheAccumulatorIsCaught) {
  const GemmResult r = gemm({.m = 256, .n = 512, .k = 128, .bug = GemmBug::NoZeroInit});
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.detail.find("exceeds the bound"), std::string::npos) << r.detail;
}

TEST(Gemm, SkippedKBlockIsCaught) {
  EXPECT_FALSE(gemm({.m = 128, .n = 256, .k = 64, .bug = GemmBug::SkipKBlock}).matches);
}

TEST(Gemm, TimingModeTakesTheSameCycles) {
  const GemmParams p{.m = 256, .n = 256, .k = 256};
  const GemmResult f = gemm(p), t = gemm(p, Mode::Timing);
  EXPECT_EQ(f.run.cycles, t.run.cycles);
  EXPECT_EQ(t.run.mma.mmas, 2u * 4 * 4);  // 2 tiles x 4 k-tiles x 4 MMAs
  // Functional mode adds one event per MMA: the one that computes D when the pipe reads operands.
  EXPECT_EQ(f.run.events, t.run.events + t.run.mma.mmas);
}

TEST(Gemm, FillsSmemWithAsManyStagesAsFit) {
  // B200: 227 KiB per CTA; a 128x256x64 bf16 stage is 48 KiB, the epilogue staging 32 KiB.
  EXPECT_EQ(gemm({.m = 128, .n = 256, .k = 64}, Mode::Timing).stages, 4u);
  EXPECT_EQ(gemm({.m = 128, .n = 64, .k = 64, .tile_n = 64}, Mode::Timing).stages, 8u);
}

TEST(Gemm, RejectsBadParameters) {
  EXPECT_THROW(gemm({.ab_type = DataType::F32}), InputError);
  EXPECT_THROW(gemm({.tile_n = 48}), InputError);
  EXPECT_THROW(gemm({.stages = 9}, Mode::Timing), InputError);  // 9 x 48 KiB exceed SMEM
}

}  // namespace
}  // namespace bwsim
