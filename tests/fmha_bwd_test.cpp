// The attention backward kernel (fmha_bwd): dQ, dK, dV against the fp64 backward of the same
// rounded inputs (head dims 64 and 128, causal and not, ragged lengths, GQA, f16), the checker
// silent on the correct kernel and catching the two injected bugs, the dQ reduction traffic the
// structure implies, and bad input.
#include <gtest/gtest.h>

#include <set>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernels/FmhaBackward.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

FmhaBwdResult bwd(const FmhaBwdParams& p, Mode mode = Mode::Functional) {
  return run_fmha_bwd(test::b200_config(), SimOptions{.mode = mode}, p, mode == Mode::Functional);
}

struct Case {
  const char* name;
  FmhaBwdParams p;
};

class FmhaBwdShapes : public testing::TestWithParam<Case> {};

// Race checking is on (the default): a pass is also the checker's silence on the kernel.
TEST_P(FmhaBwdShapes, MatchesTheFp64Backward) {
  const FmhaBwdResult r = bwd(GetParam().p);
  EXPECT_TRUE(r.checked && r.matches) << GetParam().name << ": " << r.detail;
  for (double e : r.max_error) EXPECT_GT(e, 0.0) << "16-bit P and dS cannot be exact";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FmhaBwdShapes,
    testing::Values(
        Case{"d64_three_q_tiles", {.batch = 1, .heads = 1, .seqlen = 384, .headdim = 64}},
        Case{"d128_not_a_tile_multiple", {.batch = 1, .heads = 2, .seqlen = 300, .headdim = 128}},
        Case{"d128_causal", {.batch = 1, .heads = 1, .seqlen = 384, .headdim = 128, .causal = true}},
        Case{"d64_ragged_causal",
             {.batch = 3, .heads = 1, .seqlen = 300, .seqlens = {37, 300, 129}, .headdim = 64, .causal = true}},
        Case{"d128_gqa_two_heads_per_group", {.batch = 1, .heads = 4, .kv_heads = 2, .seqlen = 256, .headdim = 128}},
        Case{"d64_mqa_ragged_causal",
             {.batch = 2, .heads = 3, .kv_heads = 1, .seqlen = 200, .seqlens = {200, 77}, .headdim = 64, .causal = true}},
        Case{"f16_d64", {.batch = 1, .heads = 1, .seqlen = 256, .headdim = 64, .dtype = DataType::F16}},
        Case{"pair_d128", {.batch = 1, .heads = 2, .seqlen = 384, .headdim = 128, .two_cta = true}},
        Case{"pair_ragged_causal_odd_key_tiles",
             {.batch = 2, .heads = 2, .seqlen = 300, .seqlens = {300, 130}, .headdim = 128, .causal = true,
              .two_cta = true}},
        Case{"pair_gqa", {.batch = 1, .heads = 4, .kv_heads = 2, .seqlen = 256, .headdim = 128, .two_cta = true}}),
    [](const auto& info) { return std::string(info.param.name); });

// The compute warps read dP and write dS over it without waiting for the dP MMA's commit (one
// CTA, and a pair whose leader's MMA writes the columns).
TEST(FmhaBwdBugs, DsBeforeTheDpMmaCompletedIsARace) {
  EXPECT_SIM_MISUSE(bwd({.batch = 1, .heads = 1, .seqlen = 384, .headdim = 64, .bug = FmhaBwdBug::DsBeforeDp}),
                    Rule::RaceEarlyAccumulatorRead);
  EXPECT_SIM_MISUSE(
      bwd({.batch = 1, .heads = 1, .seqlen = 384, .headdim = 128, .two_cta = true, .bug = FmhaBwdBug::DsBeforeDp}),
      Rule::RaceEarlyAccumulatorRead);
}

// A dQ reduction that skips a tile breaks no synchronisation: the numbers catch it, at the first
// row of the skipped Q tile.
TEST(FmhaBwdBugs, ADqReductionThatSkipsATileFailsTheCheck) {
  const FmhaBwdResult r = bwd({.batch = 1, .heads = 1, .seqlen = 384, .headdim = 64, .bug = FmhaBwdBug::DqSkipsTile});
  ASSERT_TRUE(r.checked);
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.detail.find("dQ[batch 0][head 0][token 128]"), std::string::npos) << r.detail;
}

// Every (key tile, Q tile) pair a CTA visits adds 128 rows x d fp32 into dQaccum: non-causal
// 3 x 3 pairs per head, causal 3 + 2 + 1; and the pre-kernel zeroes it (stores).
TEST(FmhaBwdTiming, TheDqReductionsAddOneFp32TilePerPairOfTiles) {
  for (const bool causal : {false, true}) {
    const FmhaBwdResult r =
        bwd({.batch = 2, .heads = 2, .seqlen = 384, .headdim = 128, .causal = causal}, Mode::Timing);
    const std::uint64_t pairs = 4 * (causal ? 6 : 9), tile = 128 * 128 * 4;
    EXPECT_EQ(r.main.memory.l2_reduce_bytes, pairs * tile) << causal;
    EXPECT_EQ(r.main.tma.reduces, pairs * 16) << "4 KiB boxes: 32 rows x 32 columns per reduce warp";
    EXPECT_EQ(r.pre.tma.store_bytes, 4 * 384 * (128 * 4 + 8)) << "dQaccum zeroed, D and LSE log2 written";
    EXPECT_EQ(r.ctas, 4u * 3);
    EXPECT_EQ(r.cycles, r.pre.cycles + r.main.cycles + r.post.cycles);
    // The partials path stores the same tiles instead (and the post-kernel reads them back).
    const FmhaBwdResult parts = bwd({.batch = 2, .heads = 2, .seqlen = 384, .headdim = 128, .causal = causal,
                                     .dq_path = FmhaBwdParams::DqPath::Partials},
                                    Mode::Timing);
    EXPECT_EQ(parts.main.memory.l2_reduce_bytes, 0u);
    EXPECT_EQ(parts.main.tma.store_bytes, r.main.tma.store_bytes + pairs * tile);
    EXPECT_EQ(parts.post.tma.load_bytes, pairs * tile);
  }
}

// Schedules perturbed three ways (events of a cycle reordered, SMs started up to 500 cycles
// apart): the partials path gives dQ's bits every time; the reductions' fp32 adds land in
// another order and the bits move.
TEST(FmhaBwdDqPath, PartialsAreDeterministicAndReductionsAreNot) {
  for (const auto path : {FmhaBwdParams::DqPath::Partials, FmhaBwdParams::DqPath::Reduce}) {
    std::set<std::uint64_t> digests;
    for (std::uint64_t seed : {1, 2, 3}) {
      const FmhaBwdParams p{.batch = 1, .heads = 1, .seqlen = 1024, .headdim = 64, .dq_path = path};
      const FmhaBwdResult r = run_fmha_bwd(test::b200_config(),
                                           SimOptions{.mode = Mode::Functional, .perturb_seed = seed, .perturb_sm_skew = 500},
                                           p, true);
      EXPECT_TRUE(r.matches) << r.detail;
      digests.insert(r.dq_digest);
    }
    if (path == FmhaBwdParams::DqPath::Partials)
      EXPECT_EQ(digests.size(), 1u);
    else
      EXPECT_GT(digests.size(), 1u);
  }
}

// CTA pairs add each Q tile's dQ once per 256 keys: 4 key tiles make 2 pairs, so with 4 Q tiles
// non-causal 2 x 4 tiles per head instead of 4 x 4; causal, the pairs start at their first
// tile's diagonal (4 + 2 Q tiles) where single CTAs take 4 + 3 + 2 + 1.
TEST(FmhaBwdTiming, APairReducesDqOncePer256Keys) {
  for (const bool causal : {false, true}) {
    const FmhaBwdParams p{.batch = 1, .heads = 2, .seqlen = 512, .headdim = 128, .causal = causal};
    FmhaBwdParams pair = p;
    pair.two_cta = true;
    const FmhaBwdResult one = bwd(p, Mode::Timing), two = bwd(pair, Mode::Timing);
    const std::uint64_t tile = 128 * 128 * 4;
    EXPECT_EQ(one.main.memory.l2_reduce_bytes, 2 * (causal ? 10 : 16) * tile);
    EXPECT_EQ(two.main.memory.l2_reduce_bytes, 2 * (causal ? 6 : 8) * tile);
    EXPECT_EQ(two.ctas, one.ctas);
    EXPECT_EQ(two.main.mma.flops, one.main.mma.flops + (causal ? 2 * 2 * 128.0 * 128 * 128 * 2 * 5 : 0))
        << "a causal pair's second CTA also runs its first (fully masked) Q tile";
  }
}

// With GQA the main kernel adds dK and dV into fp32 sums (one 32-row box per compute warp and
// tensor) instead of storing 16-bit tiles, and the post-kernel converts them too.
TEST(FmhaBwdTiming, GqaReducesDkAndDvIntoTheirSums) {
  const FmhaBwdResult mha = bwd({.batch = 1, .heads = 4, .seqlen = 256, .headdim = 64}, Mode::Timing);
  const FmhaBwdResult gqa = bwd({.batch = 1, .heads = 4, .kv_heads = 2, .seqlen = 256, .headdim = 64}, Mode::Timing);
  const std::uint64_t dq = 4 * 2 * 2 * 128 * 64 * 4;  // heads x key tiles x Q tiles x a tile of fp32
  EXPECT_EQ(mha.main.memory.l2_reduce_bytes, dq);
  EXPECT_EQ(gqa.main.memory.l2_reduce_bytes, dq + 4 * 2 * 2 * 128 * 64 * 4);  // dK, dV of each head's key tiles
  EXPECT_EQ(mha.main.tma.store_bytes, 4 * 256 * 64 * 2 * 2u);                  // dK, dV in bf16
  EXPECT_EQ(gqa.main.tma.store_bytes, 0u);
  EXPECT_GT(gqa.post.ctas, mha.post.ctas);
}

TEST(FmhaBwdInput, BadShapesAreClearErrors) {
  test::expect_bad_input("run fmha_bwd --headdim 192", "the backward supports head dims 64 and 128");
  test::expect_bad_input("run fmha_bwd --heads 3 --kv-heads 2", "must split evenly");
  test::expect_bad_input("run fmha_bwd --bug nope", "--bug: none, ds-before-dp or dq-skips-tile");
  test::expect_bad_input("run fmha_bwd --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml", "fmha_bwd needs 512");
  test::expect_bad_input("run fmha_bwd --headdim 64 --cta-group 2", "use head dim 128");
  test::expect_bad_input("run fmha_bwd --cta-group 3", "--cta-group must be an integer in 1..2");
}

}  // namespace
}  // namespace bwsim
