// The SM's write path for TMA stores (hw/memory/WarpSharedPath): its rate shared equally by the
// warps with stores in it, each warp's stores in order; exact cycles worked out by hand at 10 B/clk.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "bwsim/core/Engine.hpp"
#include "bwsim/hw/memory/WarpSharedPath.hpp"

namespace bwsim {
namespace {

struct Done {
  Engine* engine;
  std::vector<std::pair<std::uint64_t, Cycle>> at;  // slot, cycle its bytes were through
  static void record(void* self, std::uint64_t slot) {
    auto& d = *static_cast<Done*>(self);
    d.at.emplace_back(slot, d.engine->now());
  }
};

const int kWarp0 = 0, kWarp1 = 0;  // two objects, so two distinct keys

TEST(WarpSharedPathTest, OneWarpsStoresGoOneAfterAnotherAtTheFullRate) {
  Engine engine;
  Done done{&engine, {}};
  WarpSharedPath path(engine, 10.0, &Done::record, &done);
  path.add(0, &kWarp0, 1, 100);
  path.add(0, &kWarp0, 2, 100);
  engine.run();
  EXPECT_EQ(done.at, (std::vector<std::pair<std::uint64_t, Cycle>>{{1, 10}, {2, 20}}));
}

TEST(WarpSharedPathTest, TwoWarpsStoresLeaveTogetherEachAtHalfTheRate) {
  Engine engine;
  Done done{&engine, {}};
  WarpSharedPath path(engine, 10.0, &Done::record, &done);
  path.add(0, &kWarp0, 1, 100);
  path.add(0, &kWarp1, 2, 100);
  engine.run();
  EXPECT_EQ(done.at, (std::vector<std::pair<std::uint64_t, Cycle>>{{1, 20}, {2, 20}}));
}

// Warp 0's 100 bytes from cycle 0, warp 1's from cycle 5: warp 0 moves 50 alone, then both at 5
// B/clk, so warp 0 is through at 15 and warp 1 (50 left) alone again at 20.
TEST(WarpSharedPathTest, AStoreThatEntersLaterTakesItsShareFromThen) {
  Engine engine;
  Done done{&engine, {}};
  WarpSharedPath path(engine, 10.0, &Done::record, &done);
  path.add(0, &kWarp0, 1, 100);
  engine.schedule(5, [](void* p, std::uint64_t) { static_cast<WarpSharedPath*>(p)->add(5, &kWarp1, 2, 100); }, &path);
  engine.run();
  EXPECT_EQ(done.at, (std::vector<std::pair<std::uint64_t, Cycle>>{{1, 15}, {2, 20}}));
  EXPECT_EQ(path.in_flight(), 0u);
}

}  // namespace
}  // namespace bwsim
