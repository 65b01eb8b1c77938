// check/HappensBefore on its own: the clocks an arrival carries when it lands later than it was
// issued, with the warp acquiring in between or not (the clock is copied only at such an acquire).
#include <gtest/gtest.h>

#include "bwsim/check/HappensBefore.hpp"

namespace bwsim {
namespace {

const int kTarget = 0;  // the CTA an arrival lands on (only its address is compared)

// Warp `w` arrives on `object` (one arrival completes a phase) and the arrival lands at once.
void arrive_and_complete(HappensBefore& hb, HbWarp& w, std::uint32_t object, std::uint32_t offset, HbClock phase) {
  hb.release_later(w, &kTarget, offset, HbWarp::Arrival::Mbarrier);
  hb.landed(w, &kTarget, offset, HbWarp::Arrival::Mbarrier, object);
  hb.completed(object, phase);
}

struct Three {
  HappensBefore hb;
  HbWarp a, b, c;
  std::uint32_t x = 0, y = 0;  // a publishes on x, b and c learn through y
  Three() {
    hb.add_warp(a);
    hb.add_warp(b);
    hb.add_warp(c);
    x = hb.add_object();
    y = hb.add_object();
  }
};

// Warp b issues an arrival on y, then acquires a's phase of x, then the arrival lands: c, waiting
// on y, learns b's release but not a's (b learned of it after issuing), nor x's phase.
TEST(HappensBeforeTest, AnArrivalLandingAfterItsWarpAcquiredCarriesTheClockOfItsIssue) {
  Three t;
  arrive_and_complete(t.hb, t.a, t.x, 8, 1);
  t.hb.release_later(t.b, &kTarget, 16, HbWarp::Arrival::Mbarrier);
  t.hb.acquire(t.b, t.x);
  EXPECT_TRUE(t.b.knows_release(t.a, 1));
  EXPECT_EQ(t.hb.known(t.b, t.x), 1u);
  t.hb.landed(t.b, &kTarget, 16, HbWarp::Arrival::Mbarrier, t.y);
  t.hb.completed(t.y, 1);
  t.hb.acquire(t.c, t.y);
  EXPECT_TRUE(t.c.knows_release(t.b, 1));
  EXPECT_FALSE(t.c.knows_release(t.a, 1));
  EXPECT_EQ(t.hb.known(t.c, t.x), 0u);
}

// The same arrival issued after the acquire carries it; and two arrivals in flight across one
// acquire share its copy, each with its own release count.
TEST(HappensBeforeTest, ArrivalsIssuedAroundAnAcquireCarryWhatTheWarpKnewAtEach) {
  Three t;
  arrive_and_complete(t.hb, t.a, t.x, 8, 1);
  t.hb.release_later(t.b, &kTarget, 16, HbWarp::Arrival::Mbarrier);   // b's release 1
  t.hb.release_later(t.b, &kTarget, 24, HbWarp::Arrival::Commit);     // release 2, commit 1
  t.hb.acquire(t.b, t.x);
  t.hb.release_later(t.b, &kTarget, 32, HbWarp::Arrival::Mbarrier);   // release 3, after it
  const std::uint32_t z = t.hb.add_object(), w = t.hb.add_object();
  // The later arrival lands first, on y; the first one last, on w.
  t.hb.landed(t.b, &kTarget, 32, HbWarp::Arrival::Mbarrier, t.y);
  t.hb.landed(t.b, &kTarget, 24, HbWarp::Arrival::Commit, z);
  t.hb.landed(t.b, &kTarget, 16, HbWarp::Arrival::Mbarrier, w);
  for (const std::uint32_t o : {t.y, z, w}) t.hb.completed(o, 1);
  HbWarp on_y, on_z, on_w;
  for (HbWarp* v : {&on_y, &on_z, &on_w}) t.hb.add_warp(*v);
  t.hb.acquire(on_y, t.y);
  t.hb.acquire(on_z, z);
  t.hb.acquire(on_w, w);
  EXPECT_TRUE(on_y.knows_release(t.b, 3));
  EXPECT_TRUE(on_y.knows_release(t.a, 1));
  EXPECT_FALSE(on_y.knows_commit(t.b, 1));  // only a commit arrival carries the commits
  EXPECT_TRUE(on_z.knows_release(t.b, 2));
  EXPECT_FALSE(on_z.knows_release(t.b, 3));
  EXPECT_TRUE(on_z.knows_commit(t.b, 1));
  EXPECT_FALSE(on_z.knows_release(t.a, 1));
  EXPECT_TRUE(on_w.knows_release(t.b, 1));
  EXPECT_FALSE(on_w.knows_release(t.b, 2));
  EXPECT_FALSE(on_w.knows_release(t.a, 1));
}

TEST(HappensBeforeTest, ALandingNeverIssuedIsALogicError) {
  Three t;
  EXPECT_THROW(t.hb.landed(t.a, &kTarget, 8, HbWarp::Arrival::Mbarrier, t.x), std::logic_error);
}

}  // namespace
}  // namespace bwsim
