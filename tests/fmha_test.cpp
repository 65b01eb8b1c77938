// The FMHA forward kernel: numbers against the fp64 softmax reference (non-causal, causal, head
// dims 64, 128 and 192/128, GQA, f16, variable lengths) for the CUTLASS algorithm and
// FlashAttention-4's, the online-softmax rescale and its threshold, exp2 emulation's pipe work,
// persistent CTAs, causal tile skipping, bad shapes, and the warp roles a trace shows.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernels/Fmha.hpp"

namespace bwsim {
namespace {

FmhaResult fmha(const FmhaParams& p, Mode mode = Mode::Functional) {
  return run_fmha(test::b200_config(), SimOptions{.mode = mode}, p, mode == Mode::Functional);
}

TEST(FmhaTest, MatchesTheReferenceAcrossShapes) {
  struct Case {
    const char* name;
    FmhaParams p;
  };
  for (const Case& c :
       {Case{"d128 non-causal, 300 tokens (not a tile multiple)", {.batch = 1, .heads = 2, .seqlen = 300}},
        Case{"d64 causal", {.batch = 2, .heads = 1, .seqlen = 300, .headdim = 64, .causal = true}},
        Case{"GQA: 4 query heads per K/V head", {.batch = 1, .heads = 4, .kv_heads = 1, .seqlen = 200}},
        Case{"f16, causal, d128, one K/V tile", {.batch = 1, .heads = 1, .seqlen = 100, .dtype = DataType::F16, .causal = true}},
        Case{"variable lengths 37, 300, 129 (padded to 300), causal",
             {.batch = 3, .heads = 1, .seqlen = 300, .seqlens = {37, 300, 129}, .headdim = 64, .causal = true}}}) {
    const FmhaResult r = fmha(c.p);
    EXPECT_TRUE(r.checked && r.matches) << c.name << ": " << r.detail;
  }
}

// The forward's log-sum-exp rows (issue 24: the backward recomputes P from them) against the fp64
// reference on ragged lengths, head dims 64 and 128, causal, GQA and the FA4 algorithm; writing
// them costs the correction warps a lg2 and two FMAs per row and the epilogue one store per quadrant.
TEST(FmhaTest, TheLogSumExpRowsMatchTheReference) {
  for (const FmhaParams& p :
       {FmhaParams{.batch = 2, .heads = 2, .seqlen = 333, .seqlens = {100, 333}, .lse = true},
        FmhaParams{.batch = 1, .heads = 4, .kv_heads = 2, .seqlen = 300, .headdim = 64, .causal = true, .lse = true},
        FmhaParams{.batch = 1, .heads = 2, .seqlen = 260, .lse = true, .algorithm = FmhaAlgorithm::fa4(128, false)}}) {
    const FmhaResult r = fmha(p);
    ASSERT_TRUE(r.checked);
    EXPECT_TRUE(r.matches) << r.detail;
    EXPECT_NE(r.detail.find("LSE"), std::string::npos) << r.detail;
  }
  FmhaParams without{.batch = 1, .heads = 2, .seqlen = 256};
  FmhaParams with = without;
  with.lse = true;
  const FmhaResult a = fmha(without, Mode::Timing), b = fmha(with, Mode::Timing);
  EXPECT_EQ(b.run.tma.stores, a.run.tma.stores + 2 * 2 * 4);  // 2 heads x 2 Q tiles x 4 quadrants
  EXPECT_GT(b.run.cycles, a.run.cycles);
}

TEST(FmhaTest, TheOnlineSoftmaxRescaleRunsAndKeepsTheNumbersRight) {
  // 4 K/V tiles: with random scores most rows' maxima grow after the first tile, so the
  // correction warps rescale O (each warp and Q tile counts once per tile where a row grew).
  const FmhaResult r = fmha({.batch = 1, .heads = 1, .seqlen = 512});
  EXPECT_TRUE(r.matches) << r.detail;
  EXPECT_GT(r.rescales, 0u);
  EXPECT_LE(r.rescales, 3u * 2 * 4 * 2);  // tiles 1-3 x 2 Q tiles x 4 correction warps x 2 CTAs
}

TEST(FmhaTest, CausalMaskingSkipsTheTilesAboveTheDiagonal) {
  // 512 tokens, d128: 2 CTAs of 256 query rows. Non-causal each runs 4 K/V tiles; causal the
  // first runs 2 (keys < 256), the second 4. A tile is 2 x 8 S MMAs and 2 x 8 P V MMAs.
  const FmhaResult full = fmha({.batch = 1, .heads = 1, .seqlen = 512}, Mode::Timing);
  const FmhaResult causal = fmha({.batch = 1, .heads = 1, .seqlen = 512, .causal = true}, Mode::Timing);
  EXPECT_EQ(full.run.mma.mmas, 8u * 32);
  EXPECT_EQ(causal.run.mma.mmas, 6u * 32);
}

TEST(FmhaTest, BadShapesAreClearErrors) {
  auto expect_error = [](const FmhaParams& p, const std::string& text) {
    try {
      fmha(p, Mode::Timing);
      ADD_FAILURE() << "no error for " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error({.headdim = 96}, "--headdim 96: the kernel supports head dims 64, 128 and 192");
  expect_error({.headdim = 192, .headdim_v = 192}, "--headdim-v 192: V's head dim must be 64 or 128");
  expect_error({.dtype = DataType::F16, .algorithm = {.rescale_threshold = 16}}, "--rescale-threshold 16: must be in [0, 16.00)");
  expect_error({.algorithm = {.exp2_emu_freq = 4, .exp2_emu_res = 6}}, "RES <= FREQ");
  expect_error({.seqlen = 0}, "--seqlen 0");
  expect_error({.heads = 6, .kv_heads = 4}, "must split evenly");
  expect_error({.dtype = DataType::E4M3}, "--dtype e4m3");
  expect_error({.batch = 2, .seqlen = 100, .seqlens = {50, 0}}, "a length of 0");
  expect_error({.batch = 3, .seqlen = 100, .seqlens = {50, 60}}, "2 sequence lengths for a batch of 3");
  // A machine whose CTAs cannot hold the Q tiles and two K/V stages.
  try {
    run_fmha(test::unit_config(), SimOptions{.mode = Mode::Timing}, FmhaParams{}, false);
    ADD_FAILURE() << "no error on the unit-test config";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("need 134144 bytes of SMEM"), std::string::npos) << e.what();
  }
}

// The B200 cut to 4 SMs of one die: persistent CTAs then loop over several units each.
const HardwareConfig& four_sm_b200() {
  static const HardwareConfig cfg = [] {
    HardwareConfig c = test::b200_config();
    c.sm.count = 4;
    c.sm.gpcs = 1;
    c.dies.count = 1;
    return c;
  }();
  return cfg;
}

TEST(FmhaTest, TheFlashAttention4AlgorithmMatchesTheReference) {
  struct Case {
    const char* name;
    FmhaParams p;
  };
  auto fa4 = [](FmhaParams p) {
    p.algorithm = FmhaAlgorithm::fa4(p.headdim, p.causal);
    return p;
  };
  for (const Case& c : {
           Case{"d128, persistent (3 units per CTA), exp2 emulated 16:4:1, threshold 8",
                fa4({.batch = 1, .heads = 3, .seqlen = 1000})},
           Case{"d192/128 causal: uneven K/V stages, O staged in Q, exp2 emulated 32:4:1, LPT",
                fa4({.batch = 1, .heads = 2, .seqlen = 700, .headdim = 192, .headdim_v = 128, .causal = true})},
           Case{"d192/128 non-causal, persistent", fa4({.batch = 1, .heads = 2, .seqlen = 900, .headdim = 192, .headdim_v = 128})},
           Case{"d64, GQA, variable lengths, persistent with LPT, every other pair emulated",
                {.batch = 3, .heads = 4, .kv_heads = 2, .seqlen = 600, .seqlens = {600, 130, 333}, .headdim = 64,
                 .algorithm = {.exp2_emu_freq = 4, .exp2_emu_res = 2, .exp2_emu_start = 0, .rescale_threshold = 8,
                               .persistent = true, .lpt = true, .separate_o = true}}},
           Case{"f16, causal, threshold 12", fa4({.batch = 1, .heads = 2, .seqlen = 520, .dtype = DataType::F16,
                                                  .causal = true, .algorithm = {}})},
       }) {
    FmhaParams p = c.p;
    if (p.dtype == DataType::F16) p.algorithm.rescale_threshold = 12;
    const FmhaResult r = run_fmha(four_sm_b200(), SimOptions{.mode = Mode::Functional}, p, true);
    EXPECT_TRUE(r.checked && r.matches) << c.name << ": " << r.detail;
    if (p.algorithm.persistent) {
      EXPECT_LE(r.ctas, 4u) << c.name;
    }
  }
}

TEST(FmhaTest, ARescaleThresholdSkipsRescalesWithoutChangingO) {
  // 512 tokens: 4 K/V tiles. The inputs' scores s / sqrt(d) have a standard deviation of 1.3.
  std::uint64_t rescales[3];
  const double thresholds[3] = {0.0, 1.0, 8.0};
  for (int t = 0; t < 3; ++t) {
    const FmhaResult r = fmha({.batch = 1, .heads = 1, .seqlen = 512, .algorithm = {.rescale_threshold = thresholds[t]}});
    EXPECT_TRUE(r.matches) << r.detail;
    rescales[t] = r.rescales;
  }
  EXPECT_GT(rescales[0], rescales[1]);
  EXPECT_GT(rescales[1], 0u);
  EXPECT_EQ(rescales[2], 0u);
}

TEST(FmhaTest, Exp2EmulationMovesExactlyItsShareOffTheMufu) {
  // 512 tokens, one head: 2 units of 4 K/V tiles, T = 8 tiles, U = 2 units. Each softmax warp
  // (8 per unit) runs the row block once per tile; each correction warp (4) normalises each of
  // the 2 Q tiles once (one MUFU.RCP). B200: 4 MUFU lanes per sub-partition, 8 cycles a warp.
  // MUFU: 129 per row tile (128 exp2 and the correction's); 16:4:1 emulates 16 of them.
  const FmhaResult mufu = fmha({.batch = 1, .heads = 1, .seqlen = 512}, Mode::Timing);
  const FmhaResult emu = fmha({.batch = 1, .heads = 1, .seqlen = 512, .algorithm = {.exp2_emu_freq = 16}}, Mode::Timing);
  EXPECT_EQ(mufu.run.pipes.mufu_busy_cycles, 8u * (8 * 8 * 129 + 8 * 2));
  EXPECT_EQ(emu.run.pipes.mufu_busy_cycles, 8u * (8 * 8 * 113 + 8 * 2));
  EXPECT_EQ(emu.exp2_emulated, 256u * 8 * 16);
  EXPECT_EQ(emu.exp2_mufu, 256u * 8 * 112);
  EXPECT_GT(emu.run.pipes.fma_busy_cycles, mufu.run.pipes.fma_busy_cycles);
}

TEST(FmhaTest, PersistentCtasRunTheSameWork) {
  // 4 heads x 1024 tokens: 16 units. One CTA per unit, or 4 persistent CTAs of 4 units each:
  // the same MMAs (8 tiles x 2 Q tiles x (8 S + 8 P V) per unit), and the softmax's and
  // correction's pipe work are the same.
  const FmhaParams base{.batch = 1, .heads = 4, .seqlen = 1024};
  FmhaParams persistent = base;
  persistent.algorithm.persistent = true;
  const FmhaResult one = run_fmha(four_sm_b200(), SimOptions{.mode = Mode::Timing}, base, false);
  const FmhaResult loop = run_fmha(four_sm_b200(), SimOptions{.mode = Mode::Timing}, persistent, false);
  EXPECT_EQ(one.ctas, 16u);
  EXPECT_EQ(loop.ctas, 4u);
  EXPECT_EQ(loop.units, 16u);
  EXPECT_EQ(one.run.mma.mmas, 16u * 8 * 2 * 16);
  EXPECT_EQ(loop.run.mma.mmas, one.run.mma.mmas);
  EXPECT_EQ(loop.run.pipes.mufu_busy_cycles, one.run.pipes.mufu_busy_cycles);
}

TEST(FmhaTest, ATraceShowsTheWarpRoles) {
  const std::string path = ::testing::TempDir() + "fmha.trace.json";
  const test::Outcome o = test::bwsim("run fmha --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/b200.yaml --batch 1 --heads 1 --seqlen 512 --trace " + path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json trace = nlohmann::json::parse(std::ifstream(path));
  std::set<std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") names.insert(e["args"]["name"].get<std::string>());
  for (const char* role : {"w0 Softmax0 w0", "w4 Softmax1 w0", "w8 Correction w0", "w12 MMA", "w13 Load",
                           "w14 Epilogue", "w15 Empty"})
    EXPECT_TRUE(names.count(role)) << role;
}

}  // namespace
}  // namespace bwsim
