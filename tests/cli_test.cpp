// The command line as a user meets it: every kind of bad input ends with a clear message and a
// non-zero exit (never a crash), and the JSON summary and trace are well-formed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "TestSupport.hpp"
#include "bwsim/core/Trace.hpp"
#include "bwsim/kernel/StatRegistry.hpp"

namespace {

using bwsim::test::bwsim;
using bwsim::test::Outcome;

const std::string kUnitConfig = " --config " BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml";
// A small copy so each run takes milliseconds.
const std::string kSmallCopy = "run tma_copy --rows 128 --cols 128" + kUnitConfig;

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("bwsim_cli_test_" + name);
  std::ofstream(path) << text;
  return path;
}

void expect_rejected(const Outcome& o, int code, const std::string& phrase) {
  EXPECT_EQ(o.exit_code, code) << o.output;
  EXPECT_NE(o.output.find(phrase), std::string::npos) << "missing '" << phrase << "' in:\n" << o.output;
}

TEST(Cli, ListNamesTheKernelsAndTheirParameters) {
  const Outcome o = bwsim("list");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.output.find("tma_copy"), std::string::npos);
  EXPECT_NE(o.output.find("--box-rows"), std::string::npos);
}

TEST(Cli, FunctionalRunWithCheckPasses) {
  const Outcome o = bwsim(kSmallCopy + " --functional --check");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("check     PASSED"), std::string::npos) << o.output;
}

TEST(Cli, UnknownKernel) { expect_rejected(bwsim("run no_such_kernel"), 2, "unknown kernel 'no_such_kernel'"); }

TEST(Cli, UnknownFlag) { expect_rejected(bwsim(kSmallCopy + " --bogus 3"), 2, "--bogus"); }

TEST(Cli, MissingConfigFile) {
  expect_rejected(bwsim("run tma_copy --config /nonexistent/b200.yaml"), 2, "/nonexistent/b200.yaml");
}

TEST(Cli, MalformedConfig) {
  const auto path = temp_file("malformed.yaml", "name: broken\nsm: [1, 2\n");
  expect_rejected(bwsim("run tma_copy --config " + path.string()), 2, path.string());
}

TEST(Cli, IncompleteConfigNamesTheMissingKey) {
  std::ifstream in(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml");
  std::string text, line;
  while (std::getline(in, line))
    if (line.find("load_latency") == std::string::npos) text += line + "\n";
  const auto path = temp_file("incomplete.yaml", text);
  expect_rejected(bwsim("run tma_copy --config " + path.string()), 2, "tma.load_latency");
}

TEST(Cli, OutOfRangeOverrideNamesTheKey) {
  expect_rejected(bwsim(kSmallCopy + " --set tma.bytes_per_cycle=0"), 2, "tma.bytes_per_cycle");
}

TEST(Cli, SmemOverCapacity) {
  // 64 stages of 8 KiB boxes need 512 KiB; unit_test.yaml allows 64 KiB per CTA.
  expect_rejected(bwsim(kSmallCopy + " --stages 64"), 2, "SMEM");
}

TEST(Cli, BoxOver256Elements) { expect_rejected(bwsim(kSmallCopy + " --box-rows 300"), 2, "256"); }

TEST(Cli, MisalignedGlobalStride) {
  expect_rejected(bwsim("run tma_copy --rows 16 --cols 40 --dtype u8 --box-cols 16 --swizzle none --row-pitch 100" + kUnitConfig), 2,
                  "multiple of 16");
}

TEST(Cli, MisalignedSmemDestinationIsALocatedMisuse) {
  const Outcome o = bwsim(kSmallCopy + " --stage-offset 512");
  expect_rejected(o, 3, "smem-misaligned");
  EXPECT_NE(o.output.find("warp 0"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("cycle"), std::string::npos) << o.output;
}

TEST(Cli, CheckNeedsFunctionalMode) { expect_rejected(bwsim(kSmallCopy + " --check"), 2, "--functional"); }

TEST(Cli, BadParameterValue) { expect_rejected(bwsim(kSmallCopy + " --swizzle 16B"), 2, "--swizzle"); }

// Besides the statistics (stats_test.cpp checks every one), the JSON says what ran and carries the
// kernel's own figures.
TEST(Cli, JsonSummaryCarriesTheRunAndTheKernelsFigures) {
  const Outcome o = bwsim(kSmallCopy + " --json");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto j = nlohmann::json::parse(o.output);
  for (const char* key : {"kernel", "problem", "config", "mode", "check", "tiles"}) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["kernel"], "tma_copy");
  EXPECT_EQ(j["mode"], "timing");
}

TEST(Cli, TraceIsValidTraceEventJsonWithWarpAndUnitTracks) {
  const auto path = std::filesystem::temp_directory_path() / "bwsim_cli_test_trace.json";
  const Outcome o = bwsim(kSmallCopy + " --trace " + path.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  bool producer = false, tma = false, flip = false;
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (e["ph"] == "M" && e["args"].value("name", "").find("Producer") != std::string::npos) producer = true;
    if (e["ph"] == "M" && e["args"].value("name", "").find("TMA") != std::string::npos) tma = true;
    if (e["ph"] == "i" && name.find("phase") != std::string::npos) flip = true;
  }
  EXPECT_TRUE(producer);
  EXPECT_TRUE(tma);
  EXPECT_TRUE(flip);
}

}  // namespace

namespace {

const std::string kGemm = "run gemm --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml";

TEST(CliGemm, TheIssueCommandPassesItsCheck) {
  const Outcome o = bwsim(kGemm + " --m 512 --n 512 --k 512 --dtype bf16 --functional --check");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(o.output.find('\r'), std::string::npos) << "no progress line when piped";
  EXPECT_NE(o.output.find("check     PASSED"), std::string::npos) << o.output;
}

TEST(CliGemm, AWrongResultExitsWithOne) {
  const Outcome o = bwsim(kGemm + " --m 128 --n 256 --k 128 --bug skip-kblock --functional --check");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("check     FAILED"), std::string::npos) << o.output;
}

TEST(CliGemm, BadTypeIsBadInput) { expect_rejected(bwsim(kGemm + " --dtype f32"), 2, "--dtype f32"); }

// The dtype names users type elsewhere (PyTorch's, short forms) name the same types, and --help
// lists them beside each type.
TEST(CliGemm, PyTorchDtypeNamesAreAccepted) {
  const Outcome o = bwsim(kGemm + " --m 128 --n 256 --k 64 --dtype float8_e4m3fn --d-type bfloat16 --functional --check");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("e4m3"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("check     PASSED"), std::string::npos) << o.output;
  const Outcome help = bwsim("run gemm --help");
  EXPECT_NE(help.output.find("e4m3 (float8_e4m3fn, fp8_e4m3)"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("f16 (fp16, float16, half)"), std::string::npos) << help.output;
  expect_rejected(bwsim(kGemm + " --dtype float8"), 2, "--dtype float8: the GEMM takes bf16 (bfloat16) [kind::f16]");
  EXPECT_NE(help.output.find("nvfp4 [NVFP4: kind::mxf4nvf4 e2m1, ue4m3 per 16]"), std::string::npos) << help.output;
}

// A flag parameter given alone means 1 and does not take the next option as its value; 0 and 1
// still work, anything else is bad input naming the flag.
TEST(CliFmha, CausalAloneIsAFlag) {
  const std::string fmha = "run fmha --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --batch 1 --heads 1 --seqlen 200";
  const Outcome alone = bwsim(fmha + " --causal --functional --check");
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_NE(alone.output.find("V causal, batch"), std::string::npos) << alone.output;
  EXPECT_NE(alone.output.find("check     PASSED"), std::string::npos) << "--functional was taken as --causal's value";
  const Outcome zero = bwsim(fmha + " --causal 0");
  EXPECT_EQ(zero.exit_code, 0) << zero.output;
  EXPECT_EQ(zero.output.find("V causal, batch"), std::string::npos) << zero.output;
  EXPECT_NE(bwsim(fmha + " --causal 1").output.find("V causal, batch"), std::string::npos);
  expect_rejected(bwsim(fmha + " --causal 2"), 2, "--causal: 0 or 1");
}

// Every event has ph, ts, pid, tid; spans have non-negative durations; every flow start has its
// finish and async begin its end.
void expect_trace_schema(const nlohmann::json& trace) {
  std::map<std::uint64_t, int> flows, asyncs;
  for (const auto& e : trace["traceEvents"]) {
    for (const char* key : {"ph", "ts", "pid", "tid"}) ASSERT_TRUE(e.contains(key)) << key << " missing: " << e.dump();
    const std::string ph = e["ph"];
    if (ph == "X") {
      EXPECT_GE(e["dur"].get<std::int64_t>(), 0) << e.dump();
    }
    if (ph == "s") ++flows[e["id"]];
    if (ph == "f") --flows[e["id"]];
    if (ph == "b") ++asyncs[e["id"].get<std::uint64_t>() * 2 + (e["cat"] == "mma")];
    if (ph == "e") --asyncs[e["id"].get<std::uint64_t>() * 2 + (e["cat"] == "mma")];
  }
  for (const auto& [id, n] : flows) EXPECT_EQ(n, 0) << "flow " << id;
  for (const auto& [id, n] : asyncs) EXPECT_EQ(n, 0) << "async " << id;
}

TEST(CliGemm, TraceOfTheSingleCtaGemmHasNamedTracksFlowsAndCounters) {
  const std::string path = ::testing::TempDir() + "bwsim_gemm_trace.json";
  const Outcome o = bwsim(kGemm + " --m 256 --n 256 --k 256 --trace " + path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  expect_trace_schema(trace);
  std::set<std::string> names;
  std::set<std::string> phases;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") names.insert(e["args"].value("name", ""));
    else phases.insert(std::string(e["ph"]) + ":" + e.value("name", ""));
  }
  for (const char* track : {"SM 0: CTA 0", "w0 TMA producer", "w1 MMA", "w4 Epilogue rows 0-31", "TMA unit", "MMA pipe",
                            "mbarrier phases", "CTA", "tcgen05.ld/st path"})
    EXPECT_TRUE(names.contains(track)) << track;
  for (const char* event : {"X:CTA 0", "s:tma.load -> phase", "f:phase -> wake", "C:TMEM columns in use",
                            "C:SMEM bytes in use", "i:mainloop.full[0] phase 0 done"})
    EXPECT_TRUE(phases.contains(event)) << event;

  // Filters: only warp (and CTA) tracks, only the first 1000 cycles.
  const Outcome f = bwsim(kGemm + " --m 256 --n 256 --k 256 --trace-kinds warps --trace-window 0:1000 --trace " + path);
  ASSERT_EQ(f.exit_code, 0) << f.output;
  std::ifstream in2(path);
  const auto filtered = nlohmann::json::parse(in2);
  expect_trace_schema(filtered);
  for (const auto& e : filtered["traceEvents"]) {
    if (e["ph"] == "M") continue;
    EXPECT_TRUE(e["ph"] == "X" || e["ph"] == "i") << e.dump();
    EXPECT_TRUE(e["tid"].get<int>() < bwsim::kTmaTrack || e["tid"] == bwsim::kCtaTrack) << e.dump();  // warp tracks and the CTA track
    EXPECT_LE(e["ts"].get<std::uint64_t>(), 1000u) << e.dump();
  }
  expect_rejected(bwsim(kGemm + " --trace-kinds warps,bogus --trace " + path), 2, "unknown kind 'bogus'");
  expect_rejected(bwsim(kGemm + " --trace-window 50:10 --trace " + path), 2, "--trace-window");
}

TEST(CliGemm, StatsFileAccountsForEveryCycleOfEveryWarp) {
  const std::string path = ::testing::TempDir() + "bwsim_stats.json";
  const Outcome o = bwsim(kGemm + " --m 256 --n 512 --k 512 --ctas 2 --stats " + path);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("most waited-on barrier"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("critical  TMA busy"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find(", tensor pipe busy"), std::string::npos) << o.output;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["warps"].size(), 12u);
  for (const auto& w : j["warps"]) {
    std::uint64_t sum = 0;
    for (const auto& [k, v] : w["activity"].items()) sum += v.get<std::uint64_t>();
    EXPECT_EQ(sum, w["finish"].get<std::uint64_t>() - w["start"].get<std::uint64_t>()) << w.dump();
  }
  EXPECT_EQ(j["roles"][0]["role"], "TMA producer");
  EXPECT_TRUE(j["roles"][0]["barrier_wait"].contains("mainloop.empty[*]")) << j["roles"][0].dump();
  EXPECT_EQ(j["summary"]["kernel"], "gemm");
  // Every per-SM statistic, one value per SM of the chip.
  for (const bwsim::StatRegistry::Entry& e : bwsim::stat_registry().entries())
    if (e.info.per_sm) {
      EXPECT_EQ(j["per_sm"][e.info.group()][e.info.short_name()].size(), 148u) << e.info.name;
    }
}

TEST(CliSweep, ThreeSizesGiveATableAndACsv) {
  const std::string csv = ::testing::TempDir() + "bwsim_sweep.csv";
  const Outcome o = bwsim("sweep gemm --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --param m=128,256,512 --n 256 "
                          "--k 128 --csv " + csv);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("cycles"), std::string::npos) << o.output;
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u);
  std::string header = "m,";  // the axis, then the headline statistics
  for (const bwsim::StatRegistry::Entry& e : bwsim::stat_registry().entries())
    if (e.info.headline) header += e.info.name + ",";
  EXPECT_EQ(lines[0].rfind(header, 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("128,", 0), 0u);
  EXPECT_EQ(lines[3].rfind("512,", 0), 0u);
  expect_rejected(bwsim("sweep gemm --param q=1"), 2, "with NAME one of m, n, k");
}

// A sweep's CSV lines without the wall_seconds column (the one value that differs between runs).
std::vector<std::string> csv_without_wall_time(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::size_t wall = std::string::npos;
  for (std::string l; std::getline(in, l);) {
    std::vector<std::string> cells;
    std::stringstream ss(l);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (lines.empty()) wall = std::find(cells.begin(), cells.end(), "wall_seconds") - cells.begin();
    if (wall < cells.size()) cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(wall));
    std::string joined;
    for (const std::string& c : cells) joined += c + ",";
    lines.push_back(joined);
  }
  return lines;
}

// Four points on two threads give the one-thread sweep's rows in order; three shards merged give
// them too; and the emitted Slurm array's tasks, run here one by one as Slurm would, do as well.
TEST(CliSweep, ParallelShardedAndSlurmSweepsGiveTheOneThreadCsv) {
  const std::string dir = ::testing::TempDir() + "bwsim_sweep_shards/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string sweep = "sweep gemm --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --param m=128,256 "
                            "--param k=64,128 --n 256";
  ASSERT_EQ(bwsim(sweep + " --csv " + dir + "one.csv").exit_code, 0);
  const std::vector<std::string> one = csv_without_wall_time(dir + "one.csv");
  ASSERT_EQ(one.size(), 5u);
  EXPECT_EQ(one[1].rfind("128,64,", 0), 0u) << one[1];
  EXPECT_EQ(one[4].rfind("256,128,", 0), 0u) << one[4];
  ASSERT_EQ(bwsim(sweep + " -j 2 --csv " + dir + "two.csv").exit_code, 0);
  EXPECT_EQ(csv_without_wall_time(dir + "two.csv"), one);

  std::string shards;
  for (int i = 0; i < 3; ++i) {
    const std::string csv = dir + "part" + std::to_string(i) + ".csv";
    ASSERT_EQ(bwsim(sweep + " --shard " + std::to_string(i) + "/3 --csv " + csv).exit_code, 0);
    shards += " " + csv;
  }
  ASSERT_EQ(bwsim("merge-csv " + dir + "merged.csv" + shards).exit_code, 0);
  EXPECT_EQ(csv_without_wall_time(dir + "merged.csv"), one);

  const Outcome emitted = bwsim(sweep + " --emit-slurm " + dir + "sweep.sbatch --shards 2 -j 1 --csv " + dir + "s.csv");
  ASSERT_EQ(emitted.exit_code, 0) << emitted.output;
  std::ifstream script_in(dir + "sweep.sbatch");
  const std::string script((std::istreambuf_iterator<char>(script_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(script.find("#SBATCH --array=0-1"), std::string::npos) << script;
  EXPECT_EQ(script.find("--emit-slurm"), std::string::npos) << script;
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(std::system(("SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " bash " + dir + "sweep.sbatch > /dev/null").c_str()), 0);
  ASSERT_EQ(bwsim("merge-csv " + dir + "s.csv " + dir + "s.csv.shard-0-of-2.csv " + dir + "s.csv.shard-1-of-2.csv").exit_code, 0);
  EXPECT_EQ(csv_without_wall_time(dir + "s.csv"), one);

  expect_rejected(bwsim(sweep + " --shard 3/3"), 2, "--shard: expected I/N");
  expect_rejected(bwsim("merge-csv " + dir + "bad.csv " + dir + "one.csv " + BWSIM_SOURCE_DIR "/README.md"), 2,
                  "another header");
}

TEST(CliSweep, DescribeConfigPrintsEveryKeyWithOverrides) {
  const Outcome o = bwsim("describe-config " BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml --set tma.load_latency=7");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("mma.latency_2cta_ts"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("7  (--set)"), std::string::npos) << o.output;
  expect_rejected(bwsim("describe-config " BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml --set tma.nope=1"), 2,
                  "valid keys of 'tma'");
}

TEST(CliGemm, DeadlockAndRaceHaveTheirOwnExitCodes) {
  const Outcome dead = bwsim(kGemm + " --m 128 --n 256 --k 128 --bug wrong-producer-phase");
  expect_rejected(dead, 5, "[deadlock]");
  EXPECT_NE(dead.output.find("mainloop.empty[0]"), std::string::npos) << dead.output;
  // 8 k-tiles through 4 stages: the fifth load reuses a stage the MMA released with a plain arrive.
  expect_rejected(bwsim(kGemm + " --m 128 --n 256 --k 512 --bug release-before-commit"), 3, "race-stage-reuse");
  expect_rejected(bwsim(kGemm + " --m 128 --n 256 --k 512 --bug release-before-commit --no-check-races"), 0, "cycles");
}

// bwsim run checks races on a second thread (on a host of two cores or more) and, where that finds
// one, runs the kernel again with the checks inline: the error printed is the inline run's.
TEST(CliGemm, ARaceFoundOnTheCheckingThreadIsReportedAsTheInlineChecksReportIt) {
  const std::string race = kGemm + " --m 128 --n 256 --k 512 --bug release-before-commit";
  const Outcome threaded = bwsim(race), inline_checks = bwsim(race + " --inline-race-checks");
  expect_rejected(inline_checks, 3, "race-stage-reuse");
  EXPECT_EQ(threaded.exit_code, inline_checks.exit_code);
  EXPECT_EQ(threaded.output, inline_checks.output);
  const std::string clean = kGemm + " --m 256 --n 256 --k 512 --json";
  const Outcome a = bwsim(clean), b = bwsim(clean + " --inline-race-checks");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_EQ(nlohmann::json::parse(a.output)["cycles"], nlohmann::json::parse(b.output)["cycles"]);
}

TEST(CliGemm, ClusterKernelsAreListedAndPassTheirChecks) {
  const Outcome list = bwsim("list");
  EXPECT_NE(list.output.find("gemm_mcast"), std::string::npos);
  EXPECT_NE(list.output.find("gemm_2sm"), std::string::npos);
  const std::string cfg = " --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --m 256 --n 512 --k 128 --functional --check";
  for (const char* k : {"run gemm_mcast", "run gemm_2sm --cluster 2x2 --ctas 4"}) {
    const Outcome o = bwsim(k + cfg);
    EXPECT_EQ(o.exit_code, 0) << o.output;
    EXPECT_NE(o.output.find("check     PASSED"), std::string::npos) << o.output;
  }
  expect_rejected(bwsim("run gemm_mcast --cluster 2by2" + cfg), 2, "--cluster: expected MxN");
  expect_rejected(bwsim("run gemm_mcast --cluster 2x2 --ctas 6" + cfg), 2, "not a multiple of the cluster's 4 CTAs");
}

}  // namespace
