// Where the SMs sit (hw/sm/ChipLayout): the even spread a config gets by default, and the GPC
// sizes and partitions a config measured (sm.gpc_tpcs, dies.of_gpc; their errors: config_test).
#include "bwsim/hw/sm/ChipLayout.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace bwsim {
namespace {

// The first SM of each run of consecutive SMs on one die.
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
  // Each SM's GPC: the GPC whose first SM is the last at or before it.
  EXPECT_EQ(l.gpc[15], 0u);
  EXPECT_EQ(l.gpc[16], 1u);
  EXPECT_EQ(l.gpc[113], 6u);
  EXPECT_EQ(l.gpc[114], 7u);
  EXPECT_EQ(l.gpc[131], 7u);
}

}  // namespace
}  // namespace bwsim
