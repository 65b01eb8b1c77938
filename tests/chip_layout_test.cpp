// Where the SMs sit (hw/sm/ChipLayout): the even spread a config gets by default, and the GPC
// sizes and partitions a config measured (sm.gpc_tpcs, dies.of_gpc), with their config errors.
#include "bwsim/hw/sm/ChipLayout.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

std::string h100_text() {
  std::ifstream in(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

// The die of each SM as runs [first, end) -> die.
std::vector<std::uint32_t> die_starts(const ChipLayout& l) {
  std::vector<std::uint32_t> starts;
  for (std::uint32_t sm = 0; sm < l.die.size(); ++sm)
    if (sm == 0 || l.die[sm] != l.die[sm - 1]) starts.push_back(sm);
  return starts;
}

TEST(ChipLayoutTest, ByDefaultEachDieHasItsShareOfTheGpcsFirstOnesLarger) {
  // The B200: 74 TPCs, 37 per die over 4 GPCs: 10, 9, 9, 9 SM pairs; die 1 from SM 74.
  const ChipLayout l = chip_layout(load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml"));
  EXPECT_EQ(l.gpc_first, (std::vector<std::uint32_t>{0, 20, 38, 56, 74, 94, 112, 130}));
  EXPECT_EQ(die_starts(l), (std::vector<std::uint32_t>{0, 74}));
  EXPECT_EQ(l.die[73], 0);
  EXPECT_EQ(l.die[74], 1);
}

TEST(ChipLayoutTest, TheH100sGpcsAndPartitionsAreTheMeasuredOnes) {
  // h100_l2_partition_map_b.csv: CTAs (= SMs here) in GPCs of 16 x 6 then 18 x 2; CTAs 0-15 and
  // 64-113 in one L2 partition, 16-63 and 114-131 in the other.
  const ChipLayout l = chip_layout(load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml"));
  EXPECT_EQ(l.gpc_first, (std::vector<std::uint32_t>{0, 16, 32, 48, 64, 80, 96, 114}));
  EXPECT_EQ(die_starts(l), (std::vector<std::uint32_t>{0, 16, 64, 114}));
  EXPECT_EQ(l.die[0], 0);
  EXPECT_EQ(l.die[16], 1);
  EXPECT_EQ(l.die[64], 0);
  EXPECT_EQ(l.die[113], 0);
  EXPECT_EQ(l.die[114], 1);
  EXPECT_EQ(l.die[131], 1);
}

TEST(ChipLayoutTest, TheMeasuredListsMustDescribeTheChip) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_config(text, "cfg.yaml");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  const std::string h100 = h100_text();
  EXPECT_NE(error_of(replace(h100, "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 9]", "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9]"))
                .find("sm.gpc_tpcs: needs one entry per GPC (8)"),
            std::string::npos);
  EXPECT_NE(error_of(replace(h100, "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 9]", "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 8]"))
                .find("must add up to the chip's 66"),
            std::string::npos);
  EXPECT_NE(error_of(replace(h100, "gpc_tpcs: [8, 8, 8, 8, 8, 8, 9, 9]", "gpc_tpcs: [8, 8, x, 8, 8, 8, 9, 9]"))
                .find("sm.gpc_tpcs[2]: expected a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error_of(replace(h100, "of_gpc: [0, 1, 1, 1, 0, 0, 0, 1]", "of_gpc: [0, 1, 1, 1, 0, 0, 0, 2]"))
                .find("dies.of_gpc[7]: value 2 is out of range [0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of(replace(h100, "of_gpc: [0, 1, 1, 1, 0, 0, 0, 1]", "of_gpc: [0, 0, 0, 0, 0, 0, 0, 0]"))
                .find("dies.of_gpc: die 1 has no GPC"),
            std::string::npos);
  EXPECT_NE(error_of(replace(h100, "of_gpc: [0, 1, 1, 1, 0, 0, 0, 1]", "of_gpc: [0, 1]")).find("needs one entry per GPC"),
            std::string::npos);
}

}  // namespace
}  // namespace bwsim
