// The SM's write path for TMA stores (hw/memory/WarpSharedPath): its rate shared equally by the
// warps with stores in it, each warp's stores in order; exact cycles worked out by hand.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "bwsim/core/Engine.hpp"
#include "bwsim/hw/memory/WarpSharedPath.hpp"

namespace bwsim {
namespace {

const int kWarp0 = 0, kWarp1 = 0;  // two objects, so two distinct keys

// A store entering the path: at cycle `at`, from warp `warp`, as `slot`, with `bytes`.
struct Entry {
  Cycle at;
  const void* warp;
  std::uint64_t slot;
  double bytes;
};
using Through = std::vector<std::pair<std::uint64_t, Cycle>>;  // slot, cycle its bytes were through

// Runs `entries` (in order of `at`) through a path of `rate` B/clk, each added by an event at its
// cycle; returns when each store was through, in the order they were.
Through run_path(double rate, const std::vector<Entry>& entries) {
  struct Run {
    Engine engine;
    const std::vector<Entry>* entries;
    Through through;
    WarpSharedPath* path = nullptr;
  } r{{}, &entries, {}};
  WarpSharedPath path(
      r.engine, rate,
      [](void* self, std::uint64_t slot) {
        auto& run = *static_cast<Run*>(self);
        run.through.emplace_back(slot, run.engine.now());
      },
      &r);
  r.path = &path;
  for (std::uint64_t i = 0; i < entries.size(); ++i)
    r.engine.schedule(
        entries[i].at,
        [](void* self, std::uint64_t i) {
          auto& run = *static_cast<Run*>(self);
          const Entry& e = (*run.entries)[i];
          run.path->add(e.at, e.warp, e.slot, e.bytes);
        },
        &r, i);
  r.engine.run();
  EXPECT_EQ(path.in_flight(), 0u);
  return r.through;
}

TEST(WarpSharedPathTest, OneWarpsStoresGoOneAfterAnotherAtTheFullRate) {
  EXPECT_EQ(run_path(10.0, {{0, &kWarp0, 1, 100}, {0, &kWarp0, 2, 100}}), (Through{{1, 10}, {2, 20}}));
}

TEST(WarpSharedPathTest, TwoWarpsStoresLeaveTogetherEachAtHalfTheRate) {
  EXPECT_EQ(run_path(10.0, {{0, &kWarp0, 1, 100}, {0, &kWarp1, 2, 100}}), (Through{{1, 20}, {2, 20}}));
}

// Warp 0's 100 bytes from cycle 0, warp 1's from cycle 5: warp 0 moves 50 alone, then both at 5
// B/clk, so warp 0 is through at 15 and warp 1 (50 left) alone again at 20.
TEST(WarpSharedPathTest, AStoreThatEntersLaterTakesItsShareFromThen) {
  EXPECT_EQ(run_path(10.0, {{0, &kWarp0, 1, 100}, {5, &kWarp1, 2, 100}}), (Through{{1, 15}, {2, 20}}));
}

// A fractional rate (the H100's 31.5 B/clk) and 8 KiB stores: warp 0 alone for 7 cycles (220.5
// bytes), then both at 15.75; warp 0's 7971.5 left take 506.1 cycles, so its event is at 514 (the
// next whole cycle, when it is through); warp 1 has 8192 - 507 x 15.75 = 206.75 left there, alone
// at 31.5 another 6.6 cycles: 521. Events land on whole cycles and time always moves on.
TEST(WarpSharedPathTest, FractionalRatesEndOnTheNextWholeCycle) {
  EXPECT_EQ(run_path(31.5, {{0, &kWarp0, 1, 8192}, {7, &kWarp1, 2, 8192}}), (Through{{1, 514}, {2, 521}}));
}

}  // namespace
}  // namespace bwsim
