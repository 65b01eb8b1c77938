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
  const char* dtype;
  DataType d;
};

class GemmTypes : public testing::TestWithParam<TypeCase> {};

TEST_P(GemmTypes, MatchesTheReferenceOnAPartialTileShape) {
  // 200 x 300 x 160: two M tiles (the second 72 rows), two N tiles (the second 44 columns), and
  // a K that leaves the last k-tile partly out of bounds: loads zero-fill, stores clip.
  const GemmParams p{.m = 200, .n = 300, .k = 160, .dtype = GetParam().dtype, .d_type = GetParam().d};
  const GemmResult r = gemm(p);
  ASSERT_TRUE(r.checked);
  EXPECT_TRUE(r.matches) << r.detail;
  EXPECT_EQ(r.tiles, 4u);
}

INSTANTIATE_TEST_SUITE_P(Inputs, GemmTypes,
                         testing::Values(TypeCase{"bf16", DataType::F32}, TypeCase{"f16", DataType::F32},
                                         TypeCase{"e4m3", DataType::F32}, TypeCase{"e5m2", DataType::BF16},
                                         TypeCase{"bf16", DataType::BF16}),
                         [](const auto& info) {
                           return std::string(info.param.dtype) + "_to_" + std::string(name_of(info.param.d));
                         });

// Every operand format of issue 22 on ragged M and N (and K not a multiple of the k-tile), 1-SM
// and on CTA pairs: FP4 packed in GMEM (K a multiple of 32), the block-scaled formats with their
// factor tensors loaded by TMA and copied to TMEM, tf32 on fp32 data, s8 into s32.
struct FormatCase {
  const char* name;
  const char* dtype;
  std::uint32_t k, tile_n;
  bool two_sm;
};

class GemmFormats : public testing::TestWithParam<FormatCase> {};

TEST_P(GemmFormats, MatchesTheReferenceOnARaggedShape) {
  const FormatCase& c = GetParam();
  const GemmParams p{.m = 200, .n = 300, .k = c.k, .dtype = c.dtype,
                     .d_type = std::string(c.dtype) == "s8" ? DataType::S32 : DataType::F32, .tile_n = c.tile_n,
                     .ctas = c.two_sm ? 2u : 1u, .cluster_m = c.two_sm ? 2u : 1u, .two_sm = c.two_sm};
  const GemmResult r = gemm(p);
  ASSERT_TRUE(r.checked);
  EXPECT_TRUE(r.matches) << r.detail;
}

INSTANTIATE_TEST_SUITE_P(
    EveryFormat, GemmFormats,
    testing::Values(FormatCase{"Tf32", "tf32", 72, 128, false}, FormatCase{"S8", "s8", 200, 128, false},
                    FormatCase{"E2m1", "e2m1", 160, 128, false}, FormatCase{"Mxf8", "mxf8", 200, 128, false},
                    FormatCase{"Mxf4", "mxf4", 288, 128, false}, FormatCase{"Nvfp4", "nvfp4", 288, 256, false},
                    FormatCase{"Mxf8Pair", "mxf8", 200, 256, true}, FormatCase{"Nvfp4Pair", "nvfp4", 288, 128, true},
                    FormatCase{"S8Pair", "s8", 96, 128, true}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(GemmFormats, BlockScalesReachTheResult) {
  // The same data with the factors' effect removed would not match: a zeroed SFB tensor is not
  // reachable from outside, so check instead that the scaled kinds use their factor bytes: the
  // loads carry the atoms (A: 1 atom of 512 B per k-tile for mxf8, 4 for nvfp4) and tcgen05.cp runs.
  const GemmResult mx = gemm({.m = 128, .n = 128, .k = 256, .dtype = "mxf8", .tile_n = 128}, Mode::Timing);
  EXPECT_EQ(mx.run.mma.copies, 2u * 2);                                   // 2 k-tiles x (A atom + B atom)
  EXPECT_EQ(mx.run.tma.load_bytes, 2u * (16384 + 16384 + 512 + 512));     // A, B and both atoms per k-tile
  const GemmResult nv = gemm({.m = 128, .n = 256, .k = 512, .dtype = "nvfp4", .tile_n = 256}, Mode::Timing);
  EXPECT_EQ(nv.run.mma.copies, 2u * (4 + 4 * 2));                         // 4 atoms of A, 4 x 2 blocks of B
  EXPECT_EQ(nv.run.mma.mmas, 2u * 4);
  EXPECT_DOUBLE_EQ(nv.run.mma.f4_flops, 2.0 * 128 * 256 * 512);
}

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
  EXPECT_THROW(gemm({.dtype = "f32"}), InputError);
  EXPECT_THROW(gemm({.dtype = "s8"}), InputError);                                 // D must be s32
  EXPECT_THROW(gemm({.dtype = "nvfp4", .tile_n = 64}), InputError);                // whole factor blocks
  EXPECT_THROW(gemm({.k = 48, .dtype = "mxf4", .tile_n = 128}), InputError);       // packed rows
  EXPECT_THROW(gemm({.tile_n = 48}), InputError);
  EXPECT_THROW(gemm({.stages = 9}, Mode::Timing), InputError);  // 9 x 48 KiB exceed SMEM
}

// ---------------------------------------------------------------------------------- clusters

struct ClusterCase {
  const char* name;
  std::uint32_t cm, cn;
  bool two_sm;
  const char* dtype;
};

class GemmClusters : public testing::TestWithParam<ClusterCase> {};

TEST_P(GemmClusters, MatchesTheReferenceOnAShapeThatIsNotAClusterTileMultiple) {
  // 300 x 200 x 136: partial clusters, partial tiles and a partial k-tile; two clusters.
  const ClusterCase& c = GetParam();
  const GemmParams p{.m = 300, .n = 200, .k = 136, .dtype = c.dtype, .ctas = 2 * c.cm * c.cn, .cluster_m = c.cm,
                     .cluster_n = c.cn, .two_sm = c.two_sm};
  const GemmResult r = gemm(p);
  ASSERT_TRUE(r.checked);
  EXPECT_TRUE(r.matches) << r.detail;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmClusters,
    testing::Values(ClusterCase{"Mcast1x2Bf16", 1, 2, false, "bf16"},
                    ClusterCase{"Mcast2x1F16", 2, 1, false, "f16"},
                    ClusterCase{"Mcast2x2Bf16", 2, 2, false, "bf16"},
                    ClusterCase{"Mcast4x2F16", 4, 2, false, "f16"},
                    ClusterCase{"Mcast4x4NonPortableBf16", 4, 4, false, "bf16"},
                    ClusterCase{"Pair2x1Bf16", 2, 1, true, "bf16"},
                    ClusterCase{"Pair2x2F16", 2, 2, true, "f16"},
                    ClusterCase{"Pair4x2Bf16", 4, 2, true, "bf16"},
                    ClusterCase{"Pair4x4NonPortableF16", 4, 4, true, "f16"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(GemmClusters, MulticastCutsL2BytesByTheMulticastFactor) {
  // 512 x 1024 x 256 divides into whole 2x2 cluster tiles. Per CTA and k-tile, 1x1 reads A 16 KiB
  // + B 32 KiB from L2; 2x2 reads half of each (its pieces) and multicasts them to 2 CTAs each,
  // so L2 bytes halve and the SMEM filled stays the same.
  const GemmParams one{.m = 512, .n = 1024, .k = 256, .ctas = 4};
  GemmParams mcast = one;
  mcast.cluster_m = mcast.cluster_n = 2;
  const GemmResult a = gemm(one, Mode::Timing), b = gemm(mcast, Mode::Timing);
  EXPECT_EQ(a.run.tma.load_bytes, a.run.tma.delivered_bytes);
  EXPECT_EQ(a.run.tma.load_bytes, 16ull * 4 * (16384 + 32768));  // 16 tiles x 4 k-tiles
  EXPECT_EQ(b.run.tma.load_bytes * 2, a.run.tma.load_bytes);
  EXPECT_EQ(b.run.tma.delivered_bytes, a.run.tma.delivered_bytes);
  // A CTA pair reads each B row once for 256 rows of A: B's bytes halve, A's stay.
  GemmParams pair = one;
  pair.cluster_m = 2;
  pair.two_sm = true;
  EXPECT_EQ(gemm(pair, Mode::Timing).run.tma.load_bytes, 16ull * 4 * (16384 + 16384));
}

TEST(GemmClusters, BugsAreCaughtInPairsToo) {
  EXPECT_FALSE(gemm({.m = 256, .n = 256, .k = 64, .ctas = 2, .bug = GemmBug::SkipKBlock, .cluster_m = 2, .two_sm = true})
                   .matches);
}

TEST(GemmClusters, RejectsClusterShapesThatDoNotFit) {
  EXPECT_THROW(gemm({.ctas = 3, .cluster_m = 3, .two_sm = true}, Mode::Timing), InputError);  // odd pair extent
  EXPECT_THROW(gemm({.ctas = 3, .cluster_m = 2}, Mode::Timing), InputError);                 // grid not a multiple
  EXPECT_THROW(gemm({.ctas = 32, .cluster_m = 2, .cluster_n = 16}, Mode::Timing), InputError);  // 32 CTAs
  // tile_n 32 over 8 CTAs along M: 4-row B pieces are not whole 128B-swizzle atoms.
  EXPECT_THROW(gemm({.tile_n = 32, .ctas = 8, .cluster_m = 8}, Mode::Timing), InputError);
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

TEST(GemmStalls, EveryWarpsCyclesAddUp) {
  // Each warp's issue, compute and wait cycles cover its life exactly; its mbarrier waits split
  // by barrier add up to the mbarrier total. Both GEMM forms, with clusters and pairs.
  for (const GemmParams& p : {GemmParams{.m = 256, .n = 512, .k = 512, .ctas = 2},
                              GemmParams{.m = 512, .n = 512, .k = 256, .ctas = 4, .cluster_m = 2, .cluster_n = 2},
                              GemmParams{.m = 512, .n = 512, .k = 256, .ctas = 4, .cluster_m = 2, .two_sm = true}}) {
    const GemmResult r = gemm(p, Mode::Timing);
    ASSERT_EQ(r.run.warps.size(), 6u * p.ctas);
    for (const WarpSummary& w : r.run.warps) {
      Cycle sum = 0, barriers = 0;
      for (Cycle c : w.activity) sum += c;
      for (const auto& [name, c] : w.barrier_wait) barriers += c;
      EXPECT_EQ(sum, w.finish - w.start) << "CTA " << w.cta << " warp " << w.warp << " (" << w.role << ")";
      EXPECT_EQ(barriers, w.cycles(Activity::MbarrierWait)) << "warp " << w.warp;
    }
    // The producer's waits are on the mainloop's empty barriers, the MMA warp's on its full ones.
    const WarpSummary& producer = r.run.warps[0];
    ASSERT_EQ(producer.role, "TMA producer");
    for (const auto& [name, c] : producer.barrier_wait) EXPECT_EQ(name.rfind("mainloop.empty[", 0), 0u) << name;
  }
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

TEST(GemmProgress, LongRunsReportProgressEvery2To18Events) {
  std::vector<Progress> seen;
  SimOptions o{.mode = Mode::Timing};
  o.progress = [&](const Progress& p) { seen.push_back(p); };
  const GemmResult r = run_gemm(test::b200_config(), o, {.m = 4096, .n = 4096, .k = 4096, .ctas = 148}, false);
  ASSERT_EQ(seen.size(), r.run.events >> 18);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].events, (i + 1) << 18);
    EXPECT_EQ(seen[i].ctas, 148u);
    if (i) {
      EXPECT_GE(seen[i].cycle, seen[i - 1].cycle);
    }
    if (i) {
      EXPECT_GE(seen[i].mmas, seen[i - 1].mmas);
    }
  }
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

// The persistent GEMM on an 8-SM chip: each cluster loops over several tiles (waves of the
// persistent grid) in a swizzled raster order; a shape that is no multiple of the tile.
TEST(GemmPersistent, SeveralWavesOfTilesMatchTheReference) {
  const HardwareConfig chip = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml", {"sm.count=8", "sm.gpcs=1", "dies.count=1"});
  struct Case {
    const char* name;
    GemmParams p;
  };
  for (const Case& c : {Case{"2sm, 4 pairs, 12 tiles, raster N swizzle 2",
                             GemmParams{.m = 1024, .n = 700, .k = 192, .ctas = 8, .cluster_m = 2, .two_sm = true,
                                        .raster = Raster::AlongN, .swizzle = 2}},
                        Case{"1sm, 8 CTAs, 24 tiles, raster M swizzle 4",
                             GemmParams{.m = 1024, .n = 700, .k = 192, .ctas = 8, .raster = Raster::AlongM, .swizzle = 4}}}) {
    const GemmResult r = run_gemm(chip, SimOptions{}, c.p, true);
    EXPECT_TRUE(r.checked && r.matches) << c.name << ": " << r.detail;
    EXPECT_GE(r.tiles, 3 * c.p.ctas) << c.name;  // at least three tiles per CTA
  }
}

TEST(GemmPersistent, TheCommandLineFillsTheChipWithClusters) {
  const test::Outcome o = test::bwsim(
      "run gemm_persistent --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --m 2048 --n 2048 --k 256 --json");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("\"ctas\":148"), std::string::npos) << o.output;  // 74 pairs
  EXPECT_NE(o.output.find("2x1 clusters"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("\"hbm_gbytes_per_second\""), std::string::npos) << o.output;
  const std::string run = "run gemm_persistent --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml";
  test::expect_bad_input(run + " --variant 3sm", "--variant: expected 1sm or 2sm");
  test::expect_bad_input(run + " --cluster 65536x65536", "at most 16 CTAs");
}

}  // namespace
}  // namespace bwsim
