#include "bwsim/config/HardwareConfig.hpp"

#include <gtest/gtest.h>

#include "bwsim/kernel/Simulator.hpp"

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

using test::config_text;
std::string b200_text() { return config_text("b200"); }

// Expects parse_config(text) to fail with a message containing every `parts`.
void expect_config_error(const std::string& text, std::initializer_list<const char*> parts,
                         const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(text, "cfg.yaml", overrides);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(ConfigTest, B200LoadsWithTheCitedValues) {
  const HardwareConfig c = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  EXPECT_EQ(c.name, "B200");
  EXPECT_EQ(c.sm.count, 148u);
  EXPECT_EQ(c.sm.max_smem_per_cta, 232448u);
  EXPECT_EQ(c.tma.bytes_per_cycle, 108u);
  EXPECT_EQ(c.tma.load_latency, 294u);
  EXPECT_DOUBLE_EQ(c.clock_ghz, 1.856);
}

TEST(ConfigTest, MissingKeyIsRejectedWithItsPath) {
  expect_config_error(replace(b200_text(), "  load_latency: 294", ""), {"cfg.yaml", "tma.load_latency", "missing key"});
}

TEST(ConfigTest, MissingSectionIsRejected) {
  expect_config_error("name: x\nclock_ghz: 1.0\n", {"sm", "missing section"});
}

TEST(ConfigTest, UnknownKeyIsRejectedWithItsPath) {
  expect_config_error(replace(b200_text(), "  issue_cycles: 2", "  issue_cycles: 2\n  turbo: 1"), {"tma.turbo", "unknown key"});
}

TEST(ConfigTest, WrongTypeIsRejectedWithItsPath) {
  expect_config_error(replace(b200_text(), "count: 148", "count: many"), {"sm.count", "integer", "many"});
  expect_config_error(replace(b200_text(), "clock_ghz: 1.856", "clock_ghz: fast"), {"clock_ghz", "number"});
  expect_config_error(replace(b200_text(), "  arrive_latency: 34", "  arrive_latency: [1, 2]"),
                      {"mbarrier.arrive_latency", "scalar"});
}

TEST(ConfigTest, OutOfRangeValueIsRejectedWithItsPath) {
  expect_config_error(replace(b200_text(), "count: 148", "count: 0"), {"sm.count", "out of range"});
  expect_config_error(replace(b200_text(), "bytes_per_cycle: 108", "bytes_per_cycle: -3"), {"tma.bytes_per_cycle"});
  expect_config_error(replace(b200_text(), "max_smem_per_cta: 232448", "max_smem_per_cta: 300000"),
                      {"sm.max_smem_per_cta", "exceeds sm.smem_bytes"});
}

TEST(ConfigTest, MalformedYamlIsRejected) { expect_config_error("sm: [1, 2\n", {"cfg.yaml", "not valid YAML"}); }

TEST(ConfigTest, MissingFileIsRejected) {
  EXPECT_THROW(load_config("/no/such/config.yaml"), ConfigError);
}

TEST(ConfigTest, OverridesReplaceExistingValuesOnly) {
  const HardwareConfig c =
      parse_config(b200_text(), "b200", {"tma.load_latency=500", "sm.count=2", "sm.gpcs=1", "dies.count=1"});
  EXPECT_EQ(c.tma.load_latency, 500u);
  EXPECT_EQ(c.sm.count, 2u);
  // A chip shrunk below one TPC per GPC must say how many GPCs it has.
  expect_config_error(b200_text(), {"sm.gpcs", "more GPCs than TPCs"}, {"sm.count=2"});
  expect_config_error(b200_text(), {"tma.bogus", "no such key", "valid keys of 'tma': issue_cycles, load_latency"}, {"tma.bogus=1"});
  expect_config_error(b200_text(), {"expected key=value"}, {"tma.load_latency"});
  expect_config_error(b200_text(), {"names a section"}, {"tma=3"});
  expect_config_error(b200_text(), {"tma.load_latency", "integer"}, {"tma.load_latency=soon"});
}

TEST(ConfigTest, H100LoadsWithoutTensorMemoryAndRejectsTcgen05NamingIt) {
  const HardwareConfig h100 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  EXPECT_EQ(h100.name, "H100");
  EXPECT_EQ(h100.sm.count, 132u);
  EXPECT_EQ(h100.tmem.columns, 0u);
  Simulator sim(h100, SimOptions{});
  try {
    sim.launch("k", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 64},
               [](Warp& w) -> Task { co_await w.tcgen05_alloc(SmemAddr{0}, 32); });
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tcgen05.alloc: the H100 config has no tensor memory"), std::string::npos)
        << e.what();
  }
  // TMEM columns other than 0 or a power of two in 32..512, and zero MMA rates with TMEM, are rejected.
  expect_config_error(b200_text(), {"tmem.columns"}, {"tmem.columns=16"});
  expect_config_error(b200_text(), {"mma.f16_flops_per_cycle"}, {"mma.f16_flops_per_cycle=0"});
}

TEST(ConfigTest, TheSetAssociativeL2NeedsItsWays) {
  expect_config_error(replace(b200_text(), "  policy: clock", "  policy: set_rrip"), {"cfg.yaml: l2.ways", "needs its ways"});
  expect_config_error(replace(b200_text(), "  policy: clock", "  policy: set_lru"), {"cfg.yaml: l2.ways", "(set_lru) needs its ways"});
  const HardwareConfig c = parse_config(replace(b200_text(), "  policy: clock", "  policy: set_rrip\n  ways: 16"), "cfg.yaml");
  EXPECT_EQ(c.l2.ways, 16u);
}

TEST(ConfigTest, PagesArePowersOfTwoWithRoomForTheSets) {
  expect_config_error(replace(b200_text(), "  policy: clock", "  policy: set_lru\n  ways: 16\n  page_bytes: 3000000"),
                      {"cfg.yaml: l2.page_bytes", "3000000", "powers of two"});
  expect_config_error(replace(b200_text(), "  policy: clock", "  policy: set_lru\n  ways: 16\n  page_bytes: 64"),
                      {"cfg.yaml: l2.page_bytes", "a page (64 bytes) holds at least one line (128)"});
  const HardwareConfig c =
      parse_config(replace(b200_text(), "  policy: clock", "  policy: set_lru\n  ways: 16\n  page_bytes: 2097152"), "cfg.yaml");
  EXPECT_EQ(c.l2.page_bytes, 2097152u);
  // The H200's 2048 sets per half are 11 bits; a 64 KiB page has 9 line bits: no room for them.
  test::expect_simulator_config_error(load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml", {"l2.page_bytes=65536"}),
                                      "l2.page_bytes: a page of 512 lines has too few bits above the 11 set bits");
}

TEST(ConfigTest, TheMeasuredChipLayoutListsMustDescribeTheChip) {
  const std::string h100 = config_text("h100");
  const std::string tpcs = "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 9]", dies = "of_gpc: [0, 1, 1, 1, 0, 0, 0, 1]";
  expect_config_error(replace(h100, tpcs, "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9]"), {"sm.gpc_tpcs: needs one entry per GPC (8;"});
  expect_config_error(replace(h100, tpcs, "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 8]"), {"must add up to the chip's 66"});
  expect_config_error(replace(h100, tpcs, "gpc_tpcs: [8, 8, x, 8, 8, 8, 9, 9]"), {"sm.gpc_tpcs[2]: expected a non-negative integer"});
  expect_config_error(replace(h100, dies, "of_gpc: [0, 1, 1, 1, 0, 0, 0, 2]"), {"dies.of_gpc[7]: value 2 is out of range [0, 1]"});
  expect_config_error(replace(h100, dies, "of_gpc: [0, 0, 0, 0, 0, 0, 0, 0]"), {"dies.of_gpc: die 1 has no GPC"});
  expect_config_error(replace(h100, dies, "of_gpc: [0, 1]"), {"dies.of_gpc: needs one entry per GPC"});
  expect_config_error(replace(h100, tpcs, "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 99999999999999999999999]"),
                      {"sm.gpc_tpcs[7]: expected a number"});
  expect_config_error(h100, {"edit or remove the list with sm.count"}, {"sm.count=16"});
  // The CPC of each TPC (sm.tpc_cpcs): one entry per TPC, with the GPC sizes, numbered without gaps
  // within each GPC, and not beside sm.tpcs_per_cpc.
  const std::string cpcs = "tpc_cpcs: [1, 2, 0, 1, 0, 1, 2, 0,";
  expect_config_error(replace(h100, cpcs, "tpc_cpcs: [1, 2, 0, 1, 0, 1, 2,"),
                      {"sm.tpc_cpcs: needs sm.gpc_tpcs and one entry per TPC (66;"});
  expect_config_error(replace(h100, cpcs, "tpc_cpcs: [1, 2, 0, 1, 0, 1, 2, 9,"), {"TPC 7: CPC 9 in a GPC of 8 TPCs"});
  expect_config_error(replace(h100, cpcs, "tpc_cpcs: [1, 2, 3, 1, 3, 1, 2, 3,"),
                      {"GPC 0 has no TPC in its CPC 0: number a GPC's CPCs 0, 1, ... without a gap"});
  expect_config_error(replace(h100, "  gpc_tpcs:", "  tpcs_per_cpc: 3\n  gpc_tpcs:"),
                      {"sm.tpc_cpcs: names each TPC's CPC: leave out sm.tpcs_per_cpc"});
  expect_config_error(replace(h100, "  gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 9]\n", ""), {"sm.tpc_cpcs: needs sm.gpc_tpcs"});
  // One die (one unified L2): every GPC is die 0's and the partition list is not used.
  const HardwareConfig unified = parse_config(h100, "cfg.yaml", {"dies.count=1"});
  EXPECT_TRUE(unified.dies.of_gpc.empty());
}

}  // namespace
}  // namespace bwsim
