// The mbarrier rules of reference/ptx-semantics.md, one test each, on the state machine alone.
#include "bwsim/hw/sm/MBarrier.hpp"

#include <gtest/gtest.h>

namespace bwsim {
namespace {

using Outcome = MBarrier::Outcome;

void expect_state(const MBarrier& b, std::uint64_t phase, std::uint32_t pending, std::int64_t tx) {
  EXPECT_EQ(b.phase(), phase);
  EXPECT_EQ(b.parity(), phase & 1);
  EXPECT_EQ(b.pending(), pending);
  EXPECT_EQ(b.tx(), tx);
}

TEST(MBarrierTest, InitSetsPhaseZeroPendingToCountAndTxToZero) {
  MBarrier b(64);
  EXPECT_EQ(b.status(), MBarrier::Status::Uninitialized);
  b.init(3);
  EXPECT_EQ(b.status(), MBarrier::Status::Live);
  EXPECT_EQ(b.expected(), 3u);
  expect_state(b, 0, 3, 0);
}

TEST(MBarrierTest, ArriveDecrementsPendingAndLastArrivalFlipsThePhase) {
  MBarrier b(0);
  b.init(3);
  EXPECT_EQ(b.arrive(1), Outcome::Pending);
  expect_state(b, 0, 2, 0);
  EXPECT_EQ(b.arrive(1), Outcome::Pending);
  expect_state(b, 0, 1, 0);
  EXPECT_EQ(b.arrive(1), Outcome::PhaseCompleted);
  expect_state(b, 1, 3, 0);  // pending reset to the init count
}

TEST(MBarrierTest, ArriveWithCountCountsThatManyArrivals) {
  MBarrier b(0);
  b.init(4);
  EXPECT_EQ(b.arrive(3), Outcome::Pending);
  expect_state(b, 0, 1, 0);
  EXPECT_EQ(b.arrive(1), Outcome::PhaseCompleted);
  expect_state(b, 1, 4, 0);
}

TEST(MBarrierTest, PendingCountResetsToInitCountOnEveryFlip) {
  MBarrier b(0);
  b.init(2);
  for (std::uint64_t phase = 1; phase <= 5; ++phase) {
    EXPECT_EQ(b.arrive(1), Outcome::Pending);
    EXPECT_EQ(b.arrive(1), Outcome::PhaseCompleted);
    expect_state(b, phase, 2, 0);
  }
}

TEST(MBarrierTest, PhaseFlipsWhenArrivalsAndTxBytesBothReachZero) {
  MBarrier b(0);
  b.init(1);
  EXPECT_EQ(b.arrive(1, 4096), Outcome::Pending);  // arrive.expect_tx: arrivals done, bytes pending
  expect_state(b, 0, 0, 4096);
  EXPECT_EQ(b.complete_tx(1024), Outcome::Pending);
  expect_state(b, 0, 0, 3072);
  EXPECT_EQ(b.complete_tx(3072), Outcome::PhaseCompleted);
  expect_state(b, 1, 1, 0);
}

TEST(MBarrierTest, BytesCompletedBeforeTheExpectTxWaitForTheArrival) {
  MBarrier b(0);
  b.init(1);
  EXPECT_EQ(b.complete_tx(2048), Outcome::Pending);  // the TMA beat the producer's expect_tx
  expect_state(b, 0, 1, -2048);
  EXPECT_EQ(b.arrive(1, 2048), Outcome::PhaseCompleted);
  expect_state(b, 1, 1, 0);
}

TEST(MBarrierTest, ExpectTxAddsBytesWithoutArriving) {
  MBarrier b(0);
  b.init(1);
  EXPECT_EQ(b.expect_tx(512), Outcome::Pending);
  expect_state(b, 0, 1, 512);
  EXPECT_EQ(b.arrive(1), Outcome::Pending);
  expect_state(b, 0, 0, 512);
  EXPECT_EQ(b.complete_tx(512), Outcome::PhaseCompleted);
  expect_state(b, 1, 1, 0);
}

TEST(MBarrierTest, ArrivalBeyondThePendingCountIsOverArrival) {
  MBarrier b(0);
  b.init(2);
  EXPECT_EQ(b.arrive(3), Outcome::OverArrival);
  expect_state(b, 0, 2, 0);  // the bad arrival changed nothing
  b.init(1);
  EXPECT_EQ(b.arrive(1, 16), Outcome::Pending);
  EXPECT_EQ(b.arrive(1), Outcome::OverArrival);  // pending is 0 while bytes are outstanding
}

TEST(MBarrierTest, TxCountOutsideTwoToTheTwentyIsOutOfRange) {
  MBarrier b(0);
  b.init(1);
  EXPECT_EQ(b.expect_tx(MBarrier::kTxLimit), Outcome::Pending);
  EXPECT_EQ(b.expect_tx(1), Outcome::TxOutOfRange);
  MBarrier c(0);
  c.init(1);
  EXPECT_EQ(c.complete_tx(MBarrier::kTxLimit + 1), Outcome::TxOutOfRange);
}

TEST(MBarrierTest, MoreBytesThanExpectedOnceAllArrivedIsTxUnderflow) {
  MBarrier b(0);
  b.init(1);
  EXPECT_EQ(b.arrive(1, 100), Outcome::Pending);
  EXPECT_EQ(b.complete_tx(150), Outcome::TxUnderflow);
  expect_state(b, 0, 0, -50);
}

TEST(MBarrierTest, TryWaitParityIsTrueOnceThePhaseOfThatParityCompleted) {
  MBarrier b(0);
  b.init(1);
  EXPECT_FALSE(b.parity_completed(0));  // phase 0 still running
  EXPECT_TRUE(b.parity_completed(1));   // "phase -1" counts as completed: the producer start trick
  b.arrive(1);
  EXPECT_TRUE(b.parity_completed(0));
  EXPECT_FALSE(b.parity_completed(1));
  b.arrive(1);
  // Two phases ahead looks exactly like "not yet completed" for parity 0: the hazard the
  // pipeline phase logic must prevent.
  EXPECT_FALSE(b.parity_completed(0));
}

}  // namespace
}  // namespace bwsim
