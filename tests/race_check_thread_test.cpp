// check/RaceCheckThread: the race checks on a second host thread. The thread runs what is posted
// in order and stops at the first failure; a launch with it predicts the same cycles as one with
// inline checks, and where the inline checks raise an error the threaded launch defers it
// (RaceCheckDeferred) or raises the same simulation error, for every GEMM mutant.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "TestSupport.hpp"
#include "bwsim/check/RaceCheckThread.hpp"
#include "bwsim/kernels/Fmha.hpp"
#include "bwsim/kernels/Gemm.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

TEST(RaceCheckThreadTest, RunsWhatIsPostedInOrderOnAnotherThread) {
  std::vector<int> seen;  // written by the thread only, read after drain()
  bool elsewhere = true;
  {
    RaceCheckThread t;
    for (int i = 0; i < 20000; ++i)  // several times the ring: the producer waits for room
      t.post([&seen, &elsewhere, i] {
        seen.push_back(i);
        elsewhere = elsewhere && RaceCheckThread::on_checker_thread();
      });
    EXPECT_FALSE(t.drain());
    EXPECT_TRUE(t.done_up_to(t.posted()));
  }
  ASSERT_EQ(seen.size(), 20000u);
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(seen[i], i);
  EXPECT_TRUE(elsewhere);
  EXPECT_FALSE(RaceCheckThread::on_checker_thread());
}

TEST(RaceCheckThreadTest, AFailureSkipsTheRest) {
  int ran = 0;
  RaceCheckThread t;
  t.post([&ran] { ++ran; });
  t.post([] { throw RaceFoundOnThread{}; });
  t.post([&ran] { ++ran; });
  EXPECT_TRUE(t.drain());
  EXPECT_TRUE(t.failed());
  EXPECT_EQ(ran, 1);
  // Posting goes on without throwing (a step may be posted where nothing may throw); none runs.
  EXPECT_NO_THROW(for (int i = 0; i < 20000; ++i) t.post([&ran] { ++ran; }));
  EXPECT_TRUE(t.drain());
  EXPECT_EQ(ran, 1);
}

// A command that absorbs the next of its kind while it touches the last one's end.
struct Span {
  std::vector<std::pair<int, int>>* runs;
  int begin, end;
  void operator()() const { runs->emplace_back(begin, end); }
  bool absorb(const Span& next) {
    if (next.begin != end) return false;
    end = next.end;
    return true;
  }
};

TEST(RaceCheckThreadTest, ACommandAbsorbsTheNextOfItsKindUntilTheThreadIsShownIt) {
  std::vector<std::pair<int, int>> runs;  // written by the thread only, read after drain()
  int others = 0;
  RaceCheckThread t;
  t.post_or_absorb(Span{&runs, 0, 1});
  t.post_or_absorb(Span{&runs, 1, 2});
  t.post_or_absorb(Span{&runs, 2, 3});  // one command [0, 3)
  t.post_or_absorb(Span{&runs, 5, 6});  // not adjacent: a command of its own
  t.post([&others] { ++others; });
  t.post_or_absorb(Span{&runs, 6, 7});  // another command came between: not absorbed
  EXPECT_EQ(t.posted(), 4u);
  // Commands the thread has been shown (published every kPublishEvery posts, and by drain) are
  // never changed.
  const int fill = static_cast<int>(RaceCheckThread::kPublishEvery) - 5;
  for (int i = 0; i < fill; ++i) t.post([&others] { ++others; });
  t.post_or_absorb(Span{&runs, 10, 11});  // the kPublishEvery-th: published with it
  t.post_or_absorb(Span{&runs, 11, 12});
  EXPECT_EQ(t.posted(), RaceCheckThread::kPublishEvery + 1);
  EXPECT_FALSE(t.drain());
  t.post_or_absorb(Span{&runs, 12, 13});
  EXPECT_FALSE(t.drain());
  EXPECT_EQ(runs, (std::vector<std::pair<int, int>>{{0, 3}, {5, 6}, {6, 7}, {10, 11}, {11, 12}, {12, 13}}));
  EXPECT_EQ(others, 1 + fill);
}

TEST(RaceCheckThreadTest, ALaunchPredictsTheSameWithItsChecksOnTheThread) {
  const GemmParams gemm{.m = 512, .n = 512, .k = 512, .ctas = 2, .cluster_m = 2, .two_sm = true};
  const GemmResult inline_gemm = run_gemm(test::b200_config(), SimOptions{}, gemm, true);
  const GemmResult threaded_gemm = run_gemm(test::b200_config(), SimOptions{.race_check_thread = true}, gemm, true);
  EXPECT_TRUE(threaded_gemm.matches);
  EXPECT_EQ(threaded_gemm.run.cycles, inline_gemm.run.cycles);
  EXPECT_EQ(threaded_gemm.run.events, inline_gemm.run.events);

  const FmhaParams fmha{.batch = 1, .heads = 2, .seqlen = 512};
  const FmhaResult inline_fmha = run_fmha(test::b200_config(), SimOptions{.mode = Mode::Timing}, fmha, false);
  const FmhaResult threaded_fmha =
      run_fmha(test::b200_config(), SimOptions{.mode = Mode::Timing, .race_check_thread = true}, fmha, false);
  EXPECT_EQ(threaded_fmha.run.cycles, inline_fmha.run.cycles);
  EXPECT_EQ(threaded_fmha.run.events, inline_fmha.run.events);
}

// One warp sees phase 0 of a barrier complete, then completes phase 1 (and, `stale`, phase 2 too)
// without waiting, and waits for parity 1: right, or a wait for a phase long gone (StaleParity,
// which the thread finds through the warp's happens-before record).
RunResult parity_wait(bool stale, bool threaded) {
  Simulator sim(test::unit_config(), SimOptions{.race_check_thread = threaded});
  return sim.launch("test", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 4096},
                    [stale](Warp& w) -> Task {
                      constexpr MBarrierRef kBar{64};
                      w.mbarrier_init(kBar, 1, "flag");
                      w.mbarrier_arrive(kBar);
                      co_await w.mbarrier_wait(kBar, 0);
                      w.mbarrier_arrive(kBar);
                      if (stale) w.mbarrier_arrive(kBar);
                      co_await w.sleep(20);
                      co_await w.mbarrier_wait(kBar, 1);
                    });
}

TEST(RaceCheckThreadTest, AStaleParityWaitIsDeferredAsTheInlineCheckRaisesIt) {
  EXPECT_SIM_MISUSE(parity_wait(true, false), Rule::StaleParity);
  EXPECT_THROW(parity_wait(true, true), RaceCheckDeferred);
  EXPECT_EQ(parity_wait(false, true).cycles, parity_wait(false, false).cycles);
}

// A warp reads 128 columns as four tcgen05.ld of 32, the last of them the columns an MMA is still
// writing (no commit waited for): the thread, where the four loads are one command, finds the
// race the inline checks raise at the fourth load.
RunResult four_loads(bool threaded) {
  Simulator sim(test::unit_config(), SimOptions{.mode = Mode::Timing, .race_check_thread = threaded});
  return sim.launch("test", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 32768},
                    [](Warp& w) -> Task {
                      const TmemAddr d = co_await w.tcgen05_alloc(SmemAddr{0}, 128);
                      const auto desc = [](std::uint32_t start) {
                        return encode(SmemDescriptorFields{.start_address = start, .leading_byte_offset = 128,
                                                           .stride_byte_offset = 256});
                      };
                      w.tcgen05_mma(MmaKind::F16, d + 96, desc(1024), desc(16384),
                                    encode(MmaKind::F16, {.m = 128, .n = 32}), false);
                      std::vector<std::uint32_t> regs(32 * 32);
                      for (std::uint32_t c = 0; c < 4; ++c) w.tcgen05_ld(d + 32 * c, TmemShape::S32x32b, 32, regs);
                      co_await w.tcgen05_wait_ld();
                      w.tcgen05_dealloc(d, 128);
                    });
}

TEST(RaceCheckThreadTest, AnEarlyReadInTheLastOfFourJoinedLoadsIsDeferredAsTheInlineCheckRaisesIt) {
  const MisuseError e = test::expect_misuse([] { four_loads(false); }, Rule::RaceEarlyAccumulatorRead);
  EXPECT_NE(e.detail().find("columns [96, 128)"), std::string::npos) << e.what();
  EXPECT_THROW(four_loads(true), RaceCheckDeferred);
}

// Warp 1 completes three phases (the second `gap` cycles after the first); warp 0 waits for parity
// 0 from cycle `start` on (after a few stores), which its clock may reach before the first phase
// completes and pass ahead of the second, and again for parity 0 long after the third: stale. The
// thread finds each stale wait the inline checks raise, including those whose first wait passed
// ahead (its observation is made inside the next phase's completion, before that phase is recorded).
std::string passed_ahead_then_stale(Cycle start, Cycle gap, bool threaded) {
  Simulator sim(test::unit_config(), SimOptions{.race_check_thread = threaded});
  try {
    sim.launch("test", LaunchConfig{.grid_ctas = 1, .block_threads = 64, .dynamic_smem_bytes = 4096},
               [start, gap](Warp& w) -> Task {
                 constexpr MBarrierRef kBar{64};
                 if (w.warp_idx() == 0) w.mbarrier_init(kBar, 1, "flag");
                 co_await w.syncthreads();
                 if (w.warp_idx() == 1) {
                   w.mbarrier_arrive(kBar);
                   co_await w.sleep(gap);
                   w.mbarrier_arrive(kBar);
                   co_await w.sleep(50);
                   w.mbarrier_arrive(kBar);
                   co_return;
                 }
                 co_await w.sleep(start);
                 const std::uint32_t word = 0;
                 for (std::uint32_t i = 0; i < 6; ++i)
                   w.st_shared(SmemAddr{256 + 4 * i}, std::as_bytes(std::span<const std::uint32_t>(&word, 1)));
                 co_await w.mbarrier_wait(kBar, 0);
                 co_await w.sleep(1000);
                 co_await w.mbarrier_wait(kBar, 0);
               });
  } catch (const RaceCheckDeferred&) {
    return "deferred";
  } catch (const MisuseError& e) {
    return rule_name(e.rule());
  }
  return "";
}

TEST(RaceCheckThreadTest, AStaleWaitAfterAWaitThatPassedAheadIsDeferred) {
  int stale = 0;
  for (Cycle start = 0; start < 40; start += 2)
    for (Cycle gap = 0; gap < 80; gap += 4) {
      const std::string inline_run = passed_ahead_then_stale(start, gap, false);
      const std::string threaded = passed_ahead_then_stale(start, gap, true);
      SCOPED_TRACE(fmt::format("start {} gap {}: inline '{}', threaded '{}'", start, gap, inline_run, threaded));
      if (inline_run == rule_name(Rule::StaleParity)) {
        ++stale;
        EXPECT_EQ(threaded, "deferred");
      } else {
        EXPECT_EQ(threaded, inline_run);
      }
    }
  EXPECT_GT(stale, 0);
}

// After the stale wait the warp posts many checks (whatever the thread has run by then) and exits
// while the other warp waits on the cluster barrier: its exit completes that barrier's phase,
// whose happens-before steps are posted inside the coroutine's final suspend, where nothing may
// throw. The run is deferred all the same (a post that threw there terminated the process).
TEST(RaceCheckThreadTest, ARaceFoundBeforeAWarpsExitIsDeferredFromInsideTheExit) {
  for (const std::uint32_t posts : {0u, 40u, 44u, 45u, 200u}) {
    Simulator sim(test::unit_config(), SimOptions{.race_check_thread = true});
    EXPECT_THROW(sim.launch("test", LaunchConfig{.grid_ctas = 1, .block_threads = 64, .dynamic_smem_bytes = 4096},
                            [posts](Warp& w) -> Task {
                              if (w.warp_idx() == 1) {
                                w.cluster_arrive();
                                co_await w.cluster_wait();
                                co_return;
                              }
                              constexpr MBarrierRef kBar{64};
                              w.mbarrier_init(kBar, 1, "flag");
                              w.mbarrier_arrive(kBar);
                              co_await w.mbarrier_wait(kBar, 0);
                              w.mbarrier_arrive(kBar);
                              w.mbarrier_arrive(kBar);
                              co_await w.sleep(20);
                              co_await w.mbarrier_wait(kBar, 0);  // stale: phases 1 and 2 done unseen
                              for (std::uint32_t i = 0; i < posts; ++i) w.fence_proxy_async();
                            }),
                 RaceCheckDeferred)
        << posts << " posts before the exit";
  }
}

// What a launch of `bug` reports: "deferred" where the thread found a race, else as the errors say.
std::string outcome(GemmBug bug, const GemmParams& shape, bool threaded) {
  GemmParams p = shape;
  p.bug = bug;
  try {
    const GemmResult r = run_gemm(test::b200_config(), SimOptions{.race_check_thread = threaded}, p, true);
    return r.matches ? "" : "check failed";
  } catch (const RaceCheckDeferred&) {
    return "deferred";
  } catch (const MisuseError& e) {
    return std::string("misuse ") + rule_name(e.rule());
  } catch (const SimError& e) {
    return std::string("error ") + e.what();
  }
}

// The rules the race checks raise (check/RaceChecker, Cta::check_stale_parity).
bool raised_by_race_checks(const std::string& inline_outcome) {
  for (const Rule r : {Rule::RaceStageReuse, Rule::RaceEarlyRead, Rule::RaceEarlyAccumulatorRead,
                       Rule::RaceAccumulatorOverwrite, Rule::RaceMissingProxyFence, Rule::StaleParity})
    if (inline_outcome == std::string("misuse ") + rule_name(r)) return true;
  return false;
}

TEST(RaceCheckThreadTest, EveryGemmMutantIsDeferredExactlyWhereTheInlineChecksRaiseARace) {
  const std::vector<GemmParams> shapes{
      {.m = 256, .n = 512, .k = 512, .ctas = 1},
      {.m = 512, .n = 512, .k = 512, .ctas = 2, .cluster_m = 2, .two_sm = true},
      {.m = 256, .n = 512, .k = 512, .ctas = 4, .cluster_m = 2, .cluster_n = 2},
  };
  int deferred = 0;
  for (std::uint32_t i = 0; std::string(name_of(static_cast<GemmBug>(i))) != "?"; ++i) {
    const auto bug = static_cast<GemmBug>(i);
    for (const GemmParams& shape : shapes) {
      const std::string inline_run = outcome(bug, shape, false), threaded = outcome(bug, shape, true);
      SCOPED_TRACE(fmt::format("{} on {} CTAs: inline '{}', threaded '{}'", name_of(bug), shape.ctas, inline_run, threaded));
      if (threaded == "deferred") {
        ++deferred;
        // early-dealloc's tmem-alloc-misuse: tcgen05.dealloc of columns a tcgen05.ld may still read
        // (races::dealloc, a check of the race records).
        EXPECT_TRUE(raised_by_race_checks(inline_run) ||
                    (bug == GemmBug::EarlyDealloc && inline_run == "misuse tmem-alloc-misuse"));
      } else {
        EXPECT_EQ(threaded, inline_run);
        EXPECT_FALSE(raised_by_race_checks(inline_run));
      }
    }
  }
  EXPECT_GE(deferred, 10);  // the suites' race mutants
}

}  // namespace
}  // namespace bwsim
