// The HBM models (config hbm.model): loaded_link's latency that grows with the HBM's recent load,
// worked out by hand on a constructed request sequence, and the config errors of both models.
#include <gtest/gtest.h>

#include "TestSupport.hpp"
#include "bwsim/hw/memory/HbmModel.hpp"

namespace bwsim {
namespace {

// unit_test.yaml (1 GHz) with a 100 B/cycle HBM, latency 500, and hbm.loaded: window 800 (eight
// buckets of 100 cycles), step 400 cycles reached at 10% load, queue 100 x u / (1 - u), u <= 0.9.
HardwareConfig loaded_config() {
  HardwareConfig c = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"hbm.model=loaded_link"});
  c.hbm.gbytes_per_second = 100;
  c.hbm.latency = 500;
  c.hbm.loaded = {.present = true, .window = 800, .step_latency = 400, .step_load = 0.1, .queue_latency = 100,
                  .max_load = 0.9};
  return c;
}

TEST(HbmModelTest, LoadedLinkAddsLatencyForTheLoadOfTheLastWindowAsWorkedOutByHand) {
  const auto hbm = hbm_models().at("loaded_link").make(loaded_config(), 1.0);
  // A: 40000 B at 0 on an idle link: through at 400, no load yet.
  EXPECT_EQ(hbm->transfer(0, 40000).ready, 400u + 500u);
  // B: 1000 B at 400. The window is [0, 400) so far (bucket 4, the oldest is bucket 0): 40000 B
  // moved in 400 cycles, u = 1 -> 0.9: 400 + 100 x 0.9 / 0.1 = 1300 more. Through at 410.
  HbmAccess b = hbm->transfer(400, 1000);
  EXPECT_EQ(b.through, 410u);
  EXPECT_EQ(b.ready, 410u + 500u + 1300u);
  // C: 1000 B at 1200 (bucket 12, the window from bucket 5 = cycle 500): nothing moved since 410.
  EXPECT_EQ(hbm->transfer(1200, 1000).ready, 1210u + 500u);
  // E: 14000 B at 1300 (window from cycle 600): C's 1000 B, u = 1000 / (100 x 700) = 1/70:
  // 400 x (1/70) / 0.1 + 100 x (1/70) / (69/70) = 57.14 + 1.45 -> 59. Through at 1440.
  const HbmAccess e = hbm->transfer(1300, 14000);
  EXPECT_EQ(e.through, 1440u);
  EXPECT_EQ(e.ready, 1440u + 500u + 59u);
  // D: 1000 B at 1700 (window from cycle 1000): C's and E's 15000 B, u = 15000 / 70000 = 0.2143:
  // the full step 400 + 100 x 0.2143 / 0.7857 = 27.3 -> 427.
  EXPECT_EQ(hbm->transfer(1700, 1000).ready, 1710u + 500u + 427u);
  EXPECT_EQ(hbm->busy_cycles(), (40000u + 1000 + 1000 + 14000 + 1000) / 100);
  // A new launch forgets the load: the same request as B now waits only the link and latency.
  hbm->reset();
  EXPECT_EQ(hbm->transfer(400, 1000).ready, 410u + 500u);
}

TEST(HbmModelTest, EachModelRejectsTheOthersSettings) {
  HardwareConfig c = loaded_config();
  c.hbm.loaded.present = false;
  try {
    (void)hbm_models().at("loaded_link").make(c, 1.0);
    FAIL() << "loaded_link without hbm.loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unit_test.yaml: hbm.model loaded_link needs the section hbm.loaded"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)hbm_models().at("fifo_link").make(loaded_config(), 1.0);
    FAIL() << "fifo_link with hbm.loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("hbm.loaded: only hbm.model loaded_link reads it"), std::string::npos)
        << e.what();
  }
  test::expect_bad_input("describe-config " BWSIM_SOURCE_DIR "/sim_configs/h100.yaml --set hbm.loaded.max_load=1.5",
                         "hbm.loaded.max_load: value 1.5 is out of range [0, 0.999]");
}

}  // namespace
}  // namespace bwsim
