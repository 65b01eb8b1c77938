// Schedule perturbation (check/Perturbation.hpp): a seed reproduces its schedule and another seed
// gives another; latencies stay in their band and only latencies move; correct kernels stay
// correct under every schedule tried; and a pacing bug the default schedule hides is found, with
// the seed that shows it.
#include <gtest/gtest.h>

#include <set>

#include "TestSupport.hpp"
#include "bwsim/check/Perturbation.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernels/Gemm.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

const std::string kUnit = BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml";
const std::string kB200 = BWSIM_SOURCE_DIR "/sim_configs/b200.yaml";

TEST(PerturbationTest, ParsesSeedAndCount) {
  EXPECT_EQ(parse_perturb_seeds("7").first, 7u);
  EXPECT_EQ(parse_perturb_seeds("7").runs, 1u);
  EXPECT_EQ(parse_perturb_seeds("3:16").runs, 16u);
  EXPECT_THROW(parse_perturb_seeds("0:4"), InputError);
  EXPECT_THROW(parse_perturb_seeds("3:"), InputError);
  EXPECT_THROW(parse_perturb_seeds("x"), InputError);
}

// Every key naming a latency is drawn within [0.75, 1.25] of its value (rounded); nothing else moves.
TEST(PerturbationTest, OnlyLatenciesMoveAndStayInTheirBand) {
  const HardwareConfig base = load_config(kB200);
  std::set<Cycle> arrive, load;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const HardwareConfig c = perturbed_config(kB200, {}, seed, Perturbation{.latency_band = 0.25});
    for (const auto& [got, want] : {std::pair{c.mbarrier.arrive_latency, base.mbarrier.arrive_latency},
                                    std::pair{c.tma.load_latency, base.tma.load_latency},
                                    std::pair{c.mma.latency_ss, base.mma.latency_ss},
                                    std::pair<Cycle, Cycle>{c.pipes.mufu_latency, base.pipes.mufu_latency}}) {
      EXPECT_GE(static_cast<double>(got), 0.75 * static_cast<double>(want) - 0.5);
      EXPECT_LE(static_cast<double>(got), 1.25 * static_cast<double>(want) + 0.5);
    }
    EXPECT_EQ(c.tma.issue_cycles, base.tma.issue_cycles);
    EXPECT_EQ(c.mma.f16_flops_per_cycle, base.mma.f16_flops_per_cycle);
    EXPECT_EQ(c.hbm.gbytes_per_second, base.hbm.gbytes_per_second);
    arrive.insert(c.mbarrier.arrive_latency);
    load.insert(c.tma.load_latency);
  }
  EXPECT_GT(arrive.size(), 4u);
  EXPECT_GT(load.size(), 4u);
}

GemmResult perturbed_gemm(std::uint64_t seed) {
  const HardwareConfig cfg = seed ? perturbed_config(kB200, {}, seed, {}) : load_config(kB200);
  SimOptions o{.mode = Mode::Functional};
  if (seed) perturb_options(o, seed, {});
  return run_gemm(cfg, o, {.m = 512, .n = 512, .k = 256, .ctas = 4, .cluster_m = 2, .two_sm = true}, true);
}

TEST(PerturbationTest, ASeedReproducesItsScheduleAndAnotherSeedGivesAnother) {
  const GemmResult a = perturbed_gemm(3), b = perturbed_gemm(3), c = perturbed_gemm(4), d = perturbed_gemm(0);
  EXPECT_EQ(a.run.cycles, b.run.cycles);
  EXPECT_EQ(a.run.events, b.run.events);
  EXPECT_NE(a.run.cycles, c.run.cycles);
  EXPECT_NE(a.run.cycles, d.run.cycles);
  for (const GemmResult* r : {&a, &c, &d}) EXPECT_TRUE(r->matches) << r->detail;
}

// The text lists each run and sums up the completed ones' cycles: upper median and extremes.
TEST(PerturbationTest, TheTextGivesTheCompletedRunsUpperMedianAndExtremes) {
  const std::vector<PerturbedRun> runs{{.seed = 1, .ok = true, .outcome = "ok", .cycles = 300},
                                       {.seed = 2, .ok = false, .outcome = "deadlock", .cycles = 0},
                                       {.seed = 3, .ok = true, .outcome = "ok", .cycles = 100},
                                       {.seed = 4, .ok = true, .outcome = "ok", .cycles = 200},
                                       {.seed = 5, .ok = true, .outcome = "ok", .cycles = 400}};
  const std::string text = perturbed_runs_text(runs, {});
  EXPECT_NE(text.find("cycles of the 4 completed: upper median 300, 100 to 400\n"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 5 schedules failed; reproduce the first with --perturb 2"), std::string::npos) << text;
  EXPECT_EQ(perturbed_runs_text({{.seed = 1, .ok = false, .outcome = "deadlock"}}, {}).find("upper median"),
            std::string::npos);
}

// The project's kernels, correct, under 20 schedules each: no misuse, deadlock or changed result.
TEST(PerturbationTest, CorrectKernelsStayCorrectUnderEverySchedule) {
  const HardwareConfig cfg = load_config(kB200);
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>{
           {"gemm_persistent", {{"m", "512"}, {"n", "384"}, {"k", "256"}, {"ctas", "8"}}},
           {"gemm_mcast", {{"m", "512"}, {"n", "512"}, {"k", "192"}}},
           {"gemm_persistent", {{"m", "256"}, {"n", "256"}, {"k", "512"}, {"dtype", "nvfp4"}, {"ctas", "2"}}},
           {"fmha", {{"batch", "1"}, {"heads", "2"}, {"seqlen", "384"}, {"causal", "1"}}}}) {
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr);
    KernelRequest req{cfg, SimOptions{.mode = Mode::Functional}, {}, true};
    for (const KernelParam& p : k->params) req.args.set(p.name, p.default_value);
    for (const auto& [key, value] : args) req.args.set(key, value);
    for (const PerturbedRun& r : run_perturbed(*k, kB200, {}, req, {.first = 11, .runs = 20})) {
      EXPECT_TRUE(r.ok) << name << " seed " << r.seed << ": " << r.outcome << ": " << r.detail;
      EXPECT_NE(r.detail.find("match"), std::string::npos) << r.detail;
      EXPECT_GT(r.hbm_read_bytes, 0u) << name;  // the operands come from HBM into a cold L2
    }
  }
}

// A producer that paces itself with a fixed delay instead of waiting for the consumer's release
// (the mistake "it is always slower anyway"): it rewrites the one SMEM slot `kPace` cycles after
// announcing the last value. On the default schedule the consumer (mbarrier arrive + wakeup
// latency later) has read the value by then; when those latencies draw longer, it reads the next
// value instead. Nothing orders the write after the read, but no TMA or MMA is involved, so only
// the result shows it.
constexpr std::uint32_t kItems = 8;
constexpr MBarrierRef kFull{0};
constexpr SmemAddr kSlot{64};

// The values the consumer read; empty when the checker stopped the run (a producer far enough
// ahead leaves the consumer waiting on a parity whose phase is long gone: stale-parity).
std::vector<std::uint32_t> paced_transfer(const HardwareConfig& cfg, const SimOptions& options, Cycle pace) try {
  std::vector<std::uint32_t> got;
  Simulator sim(cfg, options);
  sim.launch("paced", LaunchConfig{.grid_ctas = 1, .block_threads = 64, .dynamic_smem_bytes = 1024},
             [&](Warp& w) -> Task {
               if (w.warp_idx() == 0) w.mbarrier_init(kFull, 1);
               co_await w.syncthreads();
               for (std::uint32_t i = 0; i < kItems; ++i) {
                 if (w.warp_idx() == 0) {
                   const std::uint32_t v = 100 + i;
                   w.st_shared(kSlot, std::as_bytes(std::span<const std::uint32_t>(&v, 1)));
                   w.mbarrier_arrive(kFull);
                   co_await w.sleep(pace);  // the bug: no wait on an "empty" barrier
                 } else {
                   co_await w.mbarrier_wait(kFull, i % 2);
                   got.push_back(w.ld_shared_u32(kSlot));
                 }
               }
             });
  return got;
} catch (const MisuseError&) {
  return {};
}

TEST(PerturbationTest, APacingBugTheDefaultScheduleHidesIsFoundWithItsSeed) {
  std::vector<std::uint32_t> want;
  for (std::uint32_t i = 0; i < kItems; ++i) want.push_back(100 + i);
  // The smallest pace that is correct on the default schedule: the bug's best disguise.
  const HardwareConfig base = load_config(kUnit);
  Cycle pace = 1;
  while (paced_transfer(base, SimOptions{.mode = Mode::Functional}, pace) != want) ++pace;
  ASSERT_LT(pace, 40u);
  std::vector<std::uint64_t> failing;
  simtest::for_each_perturbed_schedule(kUnit, 32, SimOptions{.mode = Mode::Functional},
                                       [&](const HardwareConfig& c, const SimOptions& o, std::uint64_t seed) {
                                         if (paced_transfer(c, o, pace) != want) failing.push_back(seed);
                                       });
  ASSERT_FALSE(failing.empty()) << "no schedule of 32 showed the bug";
  EXPECT_LT(failing.size(), 32u) << "every schedule shows it: the default one should not be special";
  // The failing seed reproduces.
  const std::uint64_t seed = failing.front();
  SimOptions o{.mode = Mode::Functional};
  perturb_options(o, seed, {});
  EXPECT_NE(paced_transfer(perturbed_config(kUnit, {}, seed, {}), o, pace), want);
  // With a real release (a pace long enough for any drawn latency) every schedule is correct.
  simtest::for_each_perturbed_schedule(kUnit, 8, SimOptions{.mode = Mode::Functional},
                                       [&](const HardwareConfig& c, const SimOptions& o2, std::uint64_t) {
                                         EXPECT_EQ(paced_transfer(c, o2, 2 * pace), want);
                                       });
}

// The pacing bug again, with a consumer whose own work per item (a TMA load it waits for) takes
// about as long as the producer's pace. On the default schedule it keeps up; where the drawn TMA
// and barrier latencies make it slower, it falls further behind with every item until the
// producer laps it: its wait then names a parity whose phase is long gone, it consumes a later
// phase, and its last wait is for arrivals that never come. With the race checker off (no
// stale-parity report), that is a deadlock the default schedule hides, found under perturbation
// and reproduced from its seed.
constexpr MBarrierRef kOwn{8};
constexpr SmemAddr kLanding{512};

bool lapped_consumer_deadlocks(const HardwareConfig& cfg, const SimOptions& options, Cycle pace) {
  Simulator sim(cfg, options);
  const GmemAddr src = sim.gmem().alloc(64);
  const TensorMap box = TensorMap::tiled({.dtype = DataType::U8, .address = src, .dims = {64}, .box = {64}});
  try {
    sim.launch("lapped", LaunchConfig{.grid_ctas = 1, .block_threads = 64, .dynamic_smem_bytes = 1024},
               [&](Warp& w) -> Task {
                 if (w.warp_idx() == 0) {
                   w.mbarrier_init(kFull, 1);
                   w.mbarrier_init(kOwn, 1);
                 }
                 co_await w.syncthreads();
                 for (std::uint32_t i = 0; i < kItems; ++i) {
                   if (w.warp_idx() == 0) {
                     w.mbarrier_arrive(kFull);
                     co_await w.sleep(pace);  // the bug: no wait on an "empty" barrier
                   } else {
                     co_await w.mbarrier_wait(kFull, i % 2);
                     w.mbarrier_arrive_expect_tx(kOwn, 64);  // the consumer's own work on the item
                     w.tma_load(box, kLanding, kOwn, {0});
                     co_await w.mbarrier_wait(kOwn, i % 2);
                   }
                 }
               });
  } catch (const DeadlockError&) {
    return true;
  }
  return false;
}

TEST(PerturbationTest, AHiddenDeadlockIsFoundAndReproducedFromItsSeed) {
  const SimOptions unchecked{.mode = Mode::Functional, .check_races = false};
  const HardwareConfig base = load_config(kUnit);
  Cycle pace = 1;  // the smallest pace the default schedule survives
  while (lapped_consumer_deadlocks(base, unchecked, pace)) ++pace;
  ASSERT_LT(pace, 400u);
  std::uint64_t found = 0;
  for (std::uint64_t seed = 1; seed <= 32 && !found; ++seed) {
    SimOptions o = unchecked;
    perturb_options(o, seed, {});
    if (lapped_consumer_deadlocks(perturbed_config(kUnit, {}, seed, {}), o, pace)) found = seed;
  }
  ASSERT_NE(found, 0u) << "no schedule of 32 deadlocked at pace " << pace;
  SimOptions o = unchecked;
  perturb_options(o, found, {});
  EXPECT_TRUE(lapped_consumer_deadlocks(perturbed_config(kUnit, {}, found, {}), o, pace))
      << "seed " << found << " reproduces it";
}

TEST(SimTestingTest, AlternateAcceptsFilledReleasedRefilledOnly) {
  EXPECT_TRUE(simtest::alternate({10, 30, 50}, {20, 40}));
  EXPECT_TRUE(simtest::alternate({10, 30}, {20, 40}));
  EXPECT_FALSE(simtest::alternate({10, 30}, {5, 40}));    // released before filled
  EXPECT_FALSE(simtest::alternate({10, 30}, {35, 40}));   // refilled before released
  EXPECT_FALSE(simtest::alternate({10}, {20, 40}));       // released twice
}

}  // namespace
}  // namespace bwsim
