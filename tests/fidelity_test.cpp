// bwsim fidelity: each uncertain value at its ends, the changes in cycles and their sum.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "TestSupport.hpp"
#include "bwsim/report/Fidelity.hpp"

namespace bwsim {
namespace {

// One CTA, one 32 KiB load on the unit-test machine (626 cycles). Its uncertainty section lists
// tma.load_latency (E, 100 -> 50 / 150), mbarrier.wakeup_latency (M, 10 -> 9 / 11) and
// tma.issue_cycles (E, 2 -> 1 / 3; 1.0 and 3.0 round to themselves). Each is on the load's path
// once, so the cycles move by exactly the value's change.
TEST(FidelityTest, EachValuesEndsMoveTheCyclesAsDerivedByHand) {
  const KernelInfo& stream = *find_kernel("tma_stream");
  KernelArgs args;
  for (const KernelParam& p : stream.params) args.set(p.name, p.default_value);
  args.set("ctas", "1");
  args.set("loads", "1");
  args.set("stages", "1");
  const FidelityReport r = fidelity(stream, BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {},
                                    SimOptions{.mode = Mode::Timing}, args);
  ASSERT_EQ(r.base_cycles, 626u);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].key, "tma.load_latency");  // the largest half-range first
  EXPECT_EQ(r.rows[0].low, "50");
  EXPECT_EQ(r.rows[0].low_cycles, 576u);
  EXPECT_EQ(r.rows[0].high_cycles, 676u);
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(r.rows[i].low_cycles, 625u) << r.rows[i].key;
    EXPECT_EQ(r.rows[i].high_cycles, 627u) << r.rows[i].key;
  }
  EXPECT_EQ(r.rows[1].key, "mbarrier.wakeup_latency");  // ties keep the file's order
  EXPECT_EQ(r.rows[1].tag, "M");
  EXPECT_DOUBLE_EQ(r.rows[1].band, 0.10);
  EXPECT_NEAR(r.uncertainty, std::sqrt(50.0 * 50 + 1 + 1) / 626, 1e-12);
  EXPECT_NEAR(r.borrowed_or_estimated_share, (2500.0 + 1) / 2502, 1e-12);  // all but wakeup's are E
}

TEST(FidelityTest, ValuesRestrictsTheRunsToTheNamedKeys) {
  const test::Outcome o = test::bwsim("fidelity tma_stream --config " BWSIM_SOURCE_DIR
                                      "/sim_configs/unit_test.yaml --ctas 1 --loads 1 --stages 1 "
                                      "--values tma.issue_cycles,mbarrier.wakeup_latency --json");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json j = nlohmann::json::parse(o.output);
  ASSERT_EQ(j["values"].size(), 2u);
  EXPECT_EQ(j["values"][0]["key"], "mbarrier.wakeup_latency");  // a tie: the file's order
  EXPECT_EQ(j["values"][1]["high_cycles"], 627);
  EXPECT_NEAR(j["uncertainty"].get<double>(), std::sqrt(2.0) / 626, 1e-12);
  test::expect_bad_input("fidelity tma_stream --config " BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml --values l2.bytes",
                         "--values: 'l2.bytes' is not listed in");
}

TEST(FidelityTest, AConfigWithoutProvenanceIsBadInput) {
  test::expect_bad_input("fidelity tma_stream --config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --loads 1",
                         "the config has no uncertainty section");
}

TEST(FidelityTest, AnUncertaintyEntryMustNameANumericValueWithABand) {
  std::ifstream in(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  const auto expect_error = [&](const std::string& from, const std::string& to, const std::string& message) {
    std::string changed = text;
    ASSERT_NE(changed.find(from), std::string::npos) << from;
    changed.replace(changed.find(from), from.size(), to);
    try {
      parse_config(changed, "unit");
      FAIL() << to << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_error("tma.load_latency: E", "tma.load_latency: V", "uncertainty.values.tma.load_latency: tag 'V' has no band");
  expect_error("tma.load_latency: E", "tma.load_latncy: E", "uncertainty.values.tma.load_latncy: names no numeric value");
  expect_error("tma.load_latency: E", "l2.policy: E", "uncertainty.values.l2.policy: names no numeric value");
  expect_error("E: 0.50}", "E: 1.5}", "uncertainty.bands.E: band 1.5 is out of range");
}

}  // namespace
}  // namespace bwsim
