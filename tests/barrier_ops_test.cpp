// mbarriers and named barriers driven by warp programs on the unit-test config
// (issue 1, arrive latency 5, wakeup 10, named-barrier latency 10): exact cycles and every
// misuse as a located error.
#include <gtest/gtest.h>

#include <vector>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

using test::run_cta;

constexpr MBarrierRef kBar{64};

// Runs `program` and expects a MisuseError of `rule` from `warp`, op containing `op`, at `cycle`.
void expect_misuse(const WarpProgram& program, Rule rule, int warp, const std::string& op, Cycle cycle,
                   std::uint32_t threads = 32) {
  try {
    run_cta(program, threads);
    FAIL() << "expected a MisuseError " << rule_name(rule);
  } catch (const MisuseError& e) {
    EXPECT_EQ(e.rule(), rule) << e.what();
    EXPECT_EQ(e.where().kernel, "test");
    EXPECT_EQ(e.where().cta, 0);
    EXPECT_EQ(e.where().warp, warp) << e.what();
    EXPECT_NE(e.where().op.find(op), std::string::npos) << e.what();
    EXPECT_EQ(e.where().cycle, cycle) << e.what();
    EXPECT_FALSE(e.hint().empty());
  }
}

TEST(BarrierOpsTest, WaiterResumesWakeupLatencyAfterTheLastArrivalLands) {
  Cycle resumed = 0;
  const MBarrier* seen = nullptr;
  auto program = [&](Warp& w) -> Task {
    if (w.warp_idx() == 0) w.mbarrier_init(kBar, 1, "flag");  // cycle 0, clock -> 1
    co_await w.bar_sync(0, 64);  // last arrival at 1 (warp 0), both resume at 1 + 10 = 11
    if (w.warp_idx() == 1) {
      EXPECT_EQ(w.now(), 11u);
      co_await w.mbarrier_wait(kBar, 0);
      resumed = w.now();
      seen = w.cta().find_barrier(kBar.offset);
      EXPECT_EQ(seen->phase(), 1u);
      EXPECT_EQ(seen->pending(), 1u);
    } else {
      co_await w.sleep(20);       // 11 -> 31
      w.mbarrier_arrive(kBar);    // issued at 31, lands at 36 and completes phase 0
    }
  };
  run_cta(program, 64);
  EXPECT_EQ(resumed, 46u);  // 36 + wakeup 10
}

// A CTA indexes its mbarriers over the span of SMEM that holds them, widened in both directions
// as barriers are initialised: each keeps its own state, and the words around them hold none.
TEST(BarrierOpsTest, BarriersInitialisedOutOfAddressOrderKeepTheirOwnState) {
  bool checked = false;
  auto program = [&](Warp& w) -> Task {
    w.mbarrier_init(MBarrierRef{512}, 1, "middle");
    w.mbarrier_init(MBarrierRef{64}, 2, "low");  // below the span: the index widens downwards
    w.mbarrier_init(MBarrierRef{1024}, 1, "high");
    w.mbarrier_arrive(MBarrierRef{512});
    w.mbarrier_arrive(MBarrierRef{64});
    co_await w.sleep(10);
    const Cta& cta = w.cta();
    EXPECT_EQ(cta.find_barrier(512)->name, "middle");
    EXPECT_EQ(cta.find_barrier(512)->phase(), 1u);
    EXPECT_EQ(cta.find_barrier(64)->name, "low");
    EXPECT_EQ(cta.find_barrier(64)->pending(), 1u);
    EXPECT_EQ(cta.find_barrier(1024)->phase(), 0u);
    for (const std::uint32_t none : {0u, 56u, 72u, 504u, 520u, 1016u, 1032u, 4096u})
      EXPECT_EQ(cta.find_barrier(none), nullptr) << none;
    checked = true;
    co_await w.mbarrier_wait(MBarrierRef{256}, 0);  // nothing was initialised there
  };
  try {
    run_cta(program);
    FAIL() << "expected the wait on an uninitialised word to fail";
  } catch (const MisuseError& e) {
    EXPECT_EQ(e.rule(), Rule::BarrierUninitialized) << e.what();
    EXPECT_TRUE(checked) << "the error came before the wait: " << e.what();
  }
}

TEST(BarrierOpsTest, WaitOnAnAlreadyCompletedPhasePassesAfterOneIssueSlot) {
  auto program = [&](Warp& w) -> Task {
    w.mbarrier_init(kBar, 1);  // 0 -> 1
    w.mbarrier_arrive(kBar);   // 1 -> 2, lands at 6
    co_await w.sleep(10);      // 2 -> 12
    co_await w.mbarrier_wait(kBar, 0);
    EXPECT_EQ(w.now(), 13u);
  };
  EXPECT_EQ(run_cta(program).cycles, 13u);
}

TEST(BarrierOpsTest, ArriveTokenNamesThePhaseAndTestWaitReportsItsCompletion) {
  auto program = [&](Warp& w) -> Task {
    w.mbarrier_init(kBar, 2);
    const BarrierToken t = co_await w.mbarrier_arrive_token(kBar);
    EXPECT_EQ(t.phase, 0u);
    EXPECT_FALSE(co_await w.mbarrier_test_wait(t));
    EXPECT_FALSE(co_await w.mbarrier_test_wait_parity(kBar, 0));
    const BarrierToken t2 = co_await w.mbarrier_arrive_token(kBar);  // completes phase 0
    EXPECT_EQ(t2.phase, 0u);
    EXPECT_TRUE(co_await w.mbarrier_test_wait(t));
    EXPECT_TRUE(co_await w.mbarrier_test_wait_parity(kBar, 0));
    const BarrierToken t3 = co_await w.mbarrier_arrive_token(kBar);
    EXPECT_EQ(t3.phase, 1u);
    EXPECT_FALSE(co_await w.mbarrier_test_wait(t3));
  };
  run_cta(program);
}

TEST(BarrierOpsTest, ProducerConsumerHandOffAcrossPhases) {
  std::vector<Cycle> consumed;
  auto program = [&](Warp& w) -> Task {
    const MBarrierRef full{0}, empty{8};
    if (w.warp_idx() == 0) {
      w.mbarrier_init(full, 1);
      w.mbarrier_init(empty, 1);
    }
    co_await w.syncthreads();
    for (std::uint32_t i = 0; i < 4; ++i) {
      if (w.warp_idx() == 0) {
        co_await w.mbarrier_wait(empty, (i & 1) ^ 1);
        w.mbarrier_arrive(full);
      } else {
        co_await w.mbarrier_wait(full, i & 1);
        consumed.push_back(w.now());
        w.mbarrier_arrive(empty);
      }
    }
  };
  run_cta(program, 64);
  // Sync ends at 2 + 10 = 12. Round 0: producer passes the empty wait at 13, arrives (lands 18),
  // consumer wakes at 28 and arrives at 28 (lands 33); producer wakes at 43, arrive lands 48,
  // consumer wakes at 58: 30 cycles a round (arrive 5 + wakeup 10, both ways).
  EXPECT_EQ(consumed, (std::vector<Cycle>{28, 58, 88, 118}));
}

TEST(BarrierOpsTest, PhaseFlipsAreRecordedForRegressionTests) {
  // The hand-off above, with its barriers named: full completes at 18, 48, 78, 108, empty at 33,
  // 63, 93, 123.
  Simulator sim(test::unit_config(), SimOptions{.record_phase_flips = true});
  const RunResult r = sim.launch("test", LaunchConfig{.grid_ctas = 1, .block_threads = 64, .dynamic_smem_bytes = 1024}, [](Warp& w) -> Task {
    const MBarrierRef full{0}, empty{8};
    if (w.warp_idx() == 0) {
      w.mbarrier_init(full, 1, "full");
      w.mbarrier_init(empty, 1, "empty");
    }
    co_await w.syncthreads();
    for (std::uint32_t i = 0; i < 4; ++i) {
      if (w.warp_idx() == 0) {
        co_await w.mbarrier_wait(empty, (i & 1) ^ 1);
        w.mbarrier_arrive(full);
      } else {
        co_await w.mbarrier_wait(full, i & 1);
        w.mbarrier_arrive(empty);
      }
    }
  });
  EXPECT_EQ(simtest::flips_of(r, "full"), (std::vector<Cycle>{18, 48, 78, 108}));
  EXPECT_EQ(simtest::flips_of(r, "empty"), (std::vector<Cycle>{33, 63, 93, 123}));
  ASSERT_EQ(r.phase_flips.size(), 8u);
  EXPECT_EQ(r.phase_flips[2].phase, 1u);  // full's second completion
}

TEST(BarrierOpsTest, AWaitTwoPhasesStaleIsALocatedError) {
  // The warp saw phase 0 complete, then phases 1 and 2 completed without it: a wait for parity
  // 1 (phase 1) would block until phase 3.
  auto program = [](Warp& w) -> Task {
    w.mbarrier_init(kBar, 1, "flag");
    w.mbarrier_arrive(kBar);
    co_await w.mbarrier_wait(kBar, 0);  // passes at 16: saw 1 phase complete
    w.mbarrier_arrive(kBar);
    w.mbarrier_arrive(kBar);
    co_await w.sleep(20);
    co_await w.mbarrier_wait(kBar, 1);
  };
  EXPECT_SIM_MISUSE(test::run_cta(program), Rule::StaleParity);
  try {
    test::run_cta(program);
  } catch (const MisuseError& e) {
    EXPECT_NE(std::string(e.what()).find("2 phases of mbarrier 'flag'"), std::string::npos) << e.what();
  }
}

TEST(BarrierOpsTest, OverArrivalIsALocatedError) {
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.mbarrier_arrive(kBar, 2);  // issued at 1, lands at 6
        co_return;
      },
      Rule::OverArrival, 0, "mbarrier.arrive", 6);
}

TEST(BarrierOpsTest, UseBeforeInitIsALocatedError) {
  expect_misuse([](Warp& w) -> Task { co_await w.mbarrier_wait(kBar, 0); }, Rule::BarrierUninitialized, 0,
                "mbarrier.try_wait", 0);
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_arrive(kBar);
        co_return;
      },
      Rule::BarrierUninitialized, 0, "mbarrier.arrive", 5);
}

TEST(BarrierOpsTest, UseAfterInvalIsALocatedError) {
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.mbarrier_inval(kBar);      // lands at 6
        w.mbarrier_arrive(kBar);     // lands at 7
        co_return;
      },
      Rule::BarrierInvalidated, 0, "mbarrier.arrive", 7);
}

TEST(BarrierOpsTest, ReinitWhileInUseIsALocatedError) {
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(kBar, 2);
        w.mbarrier_arrive(kBar);  // lands at 6: one arrival of two in flight
        co_await w.sleep(10);     // 2 -> 12
        w.mbarrier_init(kBar, 2);
      },
      Rule::BarrierReinitInUse, 0, "mbarrier.init", 12);
}

TEST(BarrierOpsTest, BadInitCountAndMisalignedAddressAreLocatedErrors) {
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(kBar, 0);
        co_return;
      },
      Rule::BarrierBadInit, 0, "mbarrier.init", 0);
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(MBarrierRef{12}, 1);
        co_return;
      },
      Rule::BarrierMisaligned, 0, "mbarrier.init", 0);
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(MBarrierRef{4096}, 1);  // the CTA has 4096 bytes of SMEM
        co_return;
      },
      Rule::SmemOutOfBounds, 0, "mbarrier.init", 0);
}

TEST(BarrierOpsTest, TxCountOverflowAndUnderflowAreLocatedErrors) {
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.mbarrier_expect_tx(kBar, 1u << 20);  // lands at 6
        co_return;
      },
      Rule::TxOutOfRange, 0, "mbarrier.expect_tx", 6);
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.mbarrier_arrive_expect_tx(kBar, 100);  // lands at 6
        w.mbarrier_complete_tx(kBar, 150);       // lands at 7
        co_return;
      },
      Rule::TxUnderflow, 0, "mbarrier.complete_tx", 7);
}

TEST(BarrierOpsTest, GenericStoreOverALiveBarrierIsClobbering) {
  expect_misuse(
      [](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        std::array<std::byte, 32> data{};
        w.st_shared(SmemAddr{48}, data);  // [48, 80) covers the barrier at 64
        co_return;
      },
      Rule::BarrierClobbered, 0, "st.shared", 0);
}

TEST(BarrierOpsTest, DeadlockReportsEachWaiterAndTheBarrierState) {
  auto program = [](Warp& w) -> Task {
    if (w.warp_idx() == 0) {
      w.set_role("Producer");
      w.mbarrier_init(kBar, 2, "full[0]");
      w.mbarrier_arrive(kBar);  // one of two arrivals: the phase never completes
    }
    co_await w.syncthreads();
    co_await w.mbarrier_wait(kBar, 0);
  };
  try {
    run_cta(program, 64);
    FAIL() << "expected a DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("warp 0 (Producer): blocked in mbarrier.try_wait.parity on mbarrier 'full[0]' (smem 0x40) "
                     "waiting for phase parity 0"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("warp 1: blocked in mbarrier.try_wait.parity"), std::string::npos) << m;
    EXPECT_NE(m.find("phase 0 (parity 0), pending 1 of 2 arrivals, tx-count 0"), std::string::npos) << m;
    EXPECT_NE(m.find("last touched by mbarrier.arrive (warp 0) at cycle 6"), std::string::npos) << m;
  }
}

// A wait whose warp's clock runs ahead of the engine is listed on its barrier at once (no clock
// catch-up event); it must resume exactly as if it had started waiting at its own cycle.
Cycle resume_after_running_ahead(std::uint32_t store_bytes, Cycle producer_sleep) {
  Cycle resumed = 0;
  auto program = [&](Warp& w) -> Task {
    if (w.warp_idx() == 0) w.mbarrier_init(kBar, 1, "flag");
    co_await w.bar_sync(0, 64);  // both at 11
    if (w.warp_idx() == 1) {
      std::vector<std::byte> data(store_bytes);
      w.st_shared(SmemAddr{4096}, data);  // store_bytes / 128 issue cycles: the clock runs ahead
      co_await w.mbarrier_wait(kBar, 0);
      resumed = w.now();
    } else {
      if (producer_sleep) co_await w.sleep(producer_sleep);
      w.mbarrier_arrive(kBar);  // lands 5 later and completes phase 0
    }
  };
  run_cta(program, 64, 8192);
  return resumed;
}

TEST(BarrierOpsTest, AWaitAheadOfTheEngineResumesAtTheFlipAfterItsClock) {
  // Waits from 11 + 16 = 27; the arrival issued at 11 + 30 = 41 lands at 46: resumes at 46 + 10.
  EXPECT_EQ(resume_after_running_ahead(2048, 30), 56u);
}

TEST(BarrierOpsTest, AWaitAheadOfTheEngineWhosePhaseFlippedBeforeItsClockPassesAtOnce) {
  // The phase completes at 11 + 5 = 16, before the warp's clock reaches the wait at 11 + 32 = 43:
  // it passes there for its issue slot (44), not a wakeup after the flip.
  EXPECT_EQ(resume_after_running_ahead(4096, 0), 44u);
}

// A wait whose warp's clock runs ahead of the engine, on a phase already complete, has its resume
// scheduled at once (no clock catch-up event); a phase completing before the warp's clock reaches
// the wait takes that pass back, and the wait is decided at the warp's cycle as it would have been.
// The consumer parks at 21 (phase 0 complete since 16) with its clock at 21 + 32 = 53; the producer
// completes phase 1 (its arrive issued at 12 + `gap`, landing 5 later) and then phase 2.
Cycle resume_after_passing_ahead(Cycle gap) {
  Cycle resumed = 0;
  auto program = [&](Warp& w) -> Task {
    if (w.warp_idx() == 0) w.mbarrier_init(kBar, 1, "flag");
    co_await w.bar_sync(0, 64);  // both at 11
    if (w.warp_idx() == 1) {
      co_await w.sleep(10);
      std::vector<std::byte> data(4096);
      w.st_shared(SmemAddr{4096}, data);  // 32 issue cycles: the clock runs ahead
      co_await w.mbarrier_wait(kBar, 0);
      resumed = w.now();
    } else {
      w.mbarrier_arrive(kBar);  // phase 0 completes at 16
      co_await w.sleep(gap);
      w.mbarrier_arrive(kBar);  // phase 1
      co_await w.sleep(100);
      w.mbarrier_arrive(kBar);  // phase 2
    }
  };
  run_cta(program, 64, 8192);
  return resumed;
}

TEST(BarrierOpsTest, AWaitAheadOfTheEngineOnACompletePhasePassesAtItsClock) {
  // Phase 1 completes at 12 + 60 + 5 = 77, after the warp's clock reached the wait at 53: it passed
  // there for its issue slot.
  EXPECT_EQ(resume_after_passing_ahead(60), 54u);
}

TEST(BarrierOpsTest, AWaitAheadOfTheEngineLosesItsPassWhenThePhaseFlipsBeforeItsClock) {
  // Phase 1 completes at 12 + 10 + 5 = 27, before 53: parity 0 names phase 2 there, which
  // completes at 12 + 10 + 1 + 100 + 5 = 128; the warp wakes 10 later.
  EXPECT_EQ(resume_after_passing_ahead(10), 138u);
}

TEST(BarrierOpsTest, ADeadlockIsReportedOnceTheBlockedWarpsClockReachedItsWait) {
  auto program = [](Warp& w) -> Task {
    if (w.warp_idx() == 0) w.mbarrier_init(kBar, 2, "never");
    co_await w.bar_sync(0, 64);  // both at 11
    if (w.warp_idx() == 1) {
      std::vector<std::byte> data(4096);
      w.st_shared(SmemAddr{4096}, data);  // clock 11 -> 43
    }
    co_await w.mbarrier_wait(kBar, 0);  // one arrival of two never comes
  };
  try {
    run_cta(program, 64, 8192);
    FAIL() << "expected a DeadlockError";
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.where().cycle, 43u) << e.what();
    EXPECT_NE(std::string(e.what()).find("warp 1: blocked in mbarrier.try_wait.parity on mbarrier 'never' (smem 0x40) "
                                         "waiting for phase parity 0 since cycle 43"),
              std::string::npos)
        << e.what();
  }
}

TEST(BarrierOpsTest, WatchdogStopsARunThatNeverEnds) {
  Simulator sim(test::unit_config(), SimOptions{.mode = Mode::Timing, .trace_path = {}, .watchdog_cycles = 1000});
  auto spin = [](Warp& w) -> Task {
    for (;;) co_await w.sleep(7);
  };
  EXPECT_THROW(sim.launch("spin", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 0}, spin),
               WatchdogError);
}

TEST(NamedBarrierTest, ReleasesEveryWarpAfterTheLastArrival) {
  std::vector<Cycle> after(3);
  auto program = [&](Warp& w) -> Task {
    co_await w.sleep(5 * w.warp_idx());  // arrivals at 0, 5, 10
    co_await w.bar_sync(1, 96);
    after[w.warp_idx()] = w.now();
  };
  run_cta(program, 96);
  EXPECT_EQ(after, (std::vector<Cycle>{20, 20, 20}));  // last arrival 10 + latency 10
}

TEST(NamedBarrierTest, DisagreeingThreadCountsAreALocatedError) {
  expect_misuse(
      [](Warp& w) -> Task { co_await w.bar_sync(2, w.warp_idx() == 0 ? 64 : 96); }, Rule::NamedBarrierMisuse, 1,
      "bar.sync", 0, 64);
}

}  // namespace
}  // namespace bwsim
