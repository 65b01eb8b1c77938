// The FMHA forward kernel: numbers against the fp64 softmax reference (non-causal, causal, head
// dims 64 and 128, GQA, f16), the online-softmax rescale, causal tile skipping, bad shapes, and
// the warp roles a trace shows.
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
  expect_error({.headdim = 96}, "--headdim 96: the kernel supports head dims 64 and 128");
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
    EXPECT_NE(std::string(e.what()).find("need 135168 bytes of SMEM"), std::string::npos) << e.what();
  }
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
