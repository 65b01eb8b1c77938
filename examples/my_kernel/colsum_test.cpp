// A regression test of colsum's barrier logic with bwsim::testing.
#include <bwsim/config/HardwareConfig.hpp>
#include <bwsim/testing/SimTesting.hpp>

#include "colsum.hpp"

namespace {

const bwsim::HardwareConfig& config() {
  static const bwsim::HardwareConfig c = bwsim::load_config(BWSIM_CONFIG_DIR "/b200.yaml");
  return c;
}

TEST(Colsum, SumsMatchTheCpu) {
  const colsum::Result r = colsum::run(config(), {.mode = bwsim::Mode::Functional}, {.rows = 512, .stages = 2});
  EXPECT_EQ(r.sums, r.expected);
}

// 8 tiles through 2 stages: each stage fills 4 times, and each fill is released (empty flips)
// only after it was filled (full flips), in turn.
TEST(Colsum, FullAndEmptyAlternateOnEveryStage) {
  const colsum::Result r = colsum::run(config(), {.mode = bwsim::Mode::Timing, .record_phase_flips = true},
                                       {.rows = 256, .stages = 2});
  for (const char* s : {"0", "1"}) {
    const auto full = bwsim::simtest::flips_of(r.run, std::string("tiles.full[") + s + "]");
    const auto empty = bwsim::simtest::flips_of(r.run, std::string("tiles.empty[") + s + "]");
    ASSERT_EQ(full.size(), 4u) << "stage " << s;
    ASSERT_EQ(empty.size(), 4u) << "stage " << s;
    for (std::size_t i = 0; i < full.size(); ++i) {
      EXPECT_LT(full[i], empty[i]) << "stage " << s << " fill " << i << " released before it was full";
      if (i + 1 < full.size()) EXPECT_LT(empty[i], full[i + 1]) << "stage " << s << " refilled before release";
    }
  }
}

// The same under 8 perturbed schedules (latencies drawn within +-25%, events of one cycle in a
// drawn order, SM starts skewed): the protocol, not the default timing, keeps the stages in turn,
// and the sums stay right.
TEST(Colsum, FullAndEmptyAlternateUnderPerturbedSchedules) {
  bwsim::simtest::for_each_perturbed_schedule(
      BWSIM_CONFIG_DIR "/b200.yaml", 8, {.mode = bwsim::Mode::Functional, .record_phase_flips = true},
      [](const bwsim::HardwareConfig& c, const bwsim::SimOptions& o, std::uint64_t) {
        const colsum::Result r = colsum::run(c, o, {.rows = 256, .stages = 2});
        EXPECT_EQ(r.sums, r.expected);
        for (const char* s : {"0", "1"})
          EXPECT_TRUE(bwsim::simtest::alternate(bwsim::simtest::flips_of(r.run, std::string("tiles.full[") + s + "]"),
                                                bwsim::simtest::flips_of(r.run, std::string("tiles.empty[") + s + "]")))
              << "stage " << s;
      });
}

// A consumer that never releases its stages leaves the producer waiting on empty[0] once the ring
// is full: a deadlock, reported with every warp's wait, not a hang.
TEST(Colsum, AStageNeverReleasedIsADeadlock) {
  EXPECT_SIM_DEADLOCK(
      colsum::run(config(), {.mode = bwsim::Mode::Timing}, {.rows = 256, .stages = 2, .forget_release = true}));
}

// Releasing a stage before reading it lets the producer refill it under the read: a located race,
// whatever the timing (here the reload lands long after the read).
TEST(Colsum, ReleasingAStageBeforeReadingItIsARace) {
  EXPECT_SIM_MISUSE(
      colsum::run(config(), {.mode = bwsim::Mode::Timing}, {.rows = 256, .stages = 2, .early_release = true}),
      bwsim::Rule::RaceStageReuse);
}

}  // namespace
