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

// A fractional rate (the H100's 31.5 B/clk) and 8 KiB stores: warp 0 alone for 7 cycles (220.5
// bytes), then both at 15.75; warp 0's 7971.5 left take 506.1 cycles, so its event is at 514 (the
// next whole cycle, when it is through); warp 1 has 8192 - 507 x 15.75 = 206.75 left there, alone
// at 31.5 another 6.6 cycles: 521. Events land on whole cycles and time always moves on.
TEST(WarpSharedPathTest, FractionalRatesEndOnTheNextWholeCycle) {
  Engine engine;
  Done done{&engine, {}};
  WarpSharedPath path(engine, 31.5, &Done::record, &done);
  path.add(0, &kWarp0, 1, 8192);
  engine.schedule(7, [](void* p, std::uint64_t) { static_cast<WarpSharedPath*>(p)->add(7, &kWarp1, 2, 8192); }, &path);
  engine.run();
  EXPECT_EQ(done.at, (std::vector<std::pair<std::uint64_t, Cycle>>{{1, 514}, {2, 521}}));
}

}  // namespace
}  // namespace bwsim
