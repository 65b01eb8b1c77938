// The async race checker (check/RaceChecker) on small scenarios, unit_test.yaml: each race rule
// fires on the broken ordering and stays silent on the correct one.
#include <gtest/gtest.h>

#include <functional>

#include "TestSupport.hpp"
#include "bwsim/testing/SimTesting.hpp"

namespace bwsim {
namespace {

constexpr SmemAddr kSlot{0};
constexpr MBarrierRef kFull{8}, kEmpty{16}, kDone{24};
constexpr SmemAddr kStage{1024};  // a 128 x 64 bf16 K-major tile, 128B swizzle (16 KiB)

// One CTA with a 128 x 64 bf16 tensor to load into kStage, and the MMA operand descriptors of it.
struct Rig {
  Simulator sim{test::unit_config(), SimOptions{}};
  GmemAddr src = sim.gmem().alloc(128 * 128);
  TensorMap map = TensorMap::tiled({.dtype = DataType::BF16, .address = src, .dims = {64, 128}, .strides = {128},
                                    .box = {64, 128}, .swizzle = Swizzle::B128});
  static SmemDescriptor operand() {
    return encode(SmemDescriptorFields{
        .start_address = kStage.offset, .leading_byte_offset = 16, .stride_byte_offset = 1024, .layout = UmmaLayout::Swizzle128B});
  }
  static InstrDescriptor idesc() { return encode(MmaKind::F16, {.m = 128, .n = 128}); }
  // Warp 0 initialises kFull, kEmpty (and kDone), warp 1 allocates 128 TMEM columns at kSlot;
  // then both synchronise.
  static Task prologue(Warp& w, bool done_barrier) {
    if (w.warp_idx() == 0) {
      w.mbarrier_init(kFull, 1);
      w.mbarrier_init(kEmpty, 1);
      if (done_barrier) w.mbarrier_init(kDone, 1);
    } else {
      co_await w.tcgen05_alloc(kSlot, 128);
    }
    co_await w.syncthreads();
  }
  void run(const WarpProgram& p, std::uint32_t threads = 64) {
    sim.launch("race", LaunchConfig{.grid_ctas = 1, .block_threads = threads, .dynamic_smem_bytes = 1024 + 16384}, p);
  }
};

// The producer's part of the two-load scenarios: load the stage (kFull), wait for its release
// (kEmpty), load it again, wait for that load.
Task load_twice(Warp& w, const TensorMap& map) {
  w.mbarrier_arrive_expect_tx(kFull, 16384);
  w.tma_load(map, kStage, kFull, {0, 0});
  co_await w.mbarrier_wait(kEmpty, 0);
  w.mbarrier_arrive_expect_tx(kFull, 16384);
  w.tma_load(map, kStage, kFull, {0, 0});
  co_await w.mbarrier_wait(kFull, 1);
}

// Warp 0 loads the stage twice (load_twice); warp 1 waits for the first load, runs `reads` (its
// MMAs on the stage and how it releases the stage on kEmpty), then drains its MMAs and frees TMEM.
void reads_between_two_loads(const std::function<void(Warp&, TmemAddr)>& reads) {
  Rig rig;
  rig.run([&](Warp& w) -> Task {
    co_await Rig::prologue(w, true);
    const TmemAddr d{w.ld_shared_u32(kSlot)};
    if (w.warp_idx() == 0) {
      co_await load_twice(w, rig.map);
    } else {
      co_await w.mbarrier_wait(kFull, 0);
      reads(w, d);
      w.tcgen05_commit(kDone);
      co_await w.mbarrier_wait(kDone, 0);
      w.tcgen05_dealloc(d, 128);
    }
  });
}

// One MMA on the first load. `release_with_commit`: the MMA warp frees the stage with
// tcgen05.commit (correct) or with a plain arrive right after issuing the MMA (the MMA may still
// be reading when the second load lands).
void stage_reuse(bool release_with_commit) {
  reads_between_two_loads([&](Warp& w, TmemAddr d) {
    w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
    if (release_with_commit) w.tcgen05_commit(kEmpty);
    else w.mbarrier_arrive(kEmpty);
  });
}

TEST(RaceTest, StageReleasedBeforeTheMmaCompletedIsReused) {
  EXPECT_NO_THROW(stage_reuse(true));
  EXPECT_SIM_MISUSE(stage_reuse(false), Rule::RaceStageReuse);
}

// The MMA warp reads the stage in k-steps (each operand's span shifted by 32 bytes: one k-slice of
// the 128B-swizzled rows), as a mainloop does: steps [first, first + count) of the 4.
void k_steps(Warp& w, TmemAddr d, std::uint32_t first, std::uint32_t count) {
  for (std::uint32_t kk = first; kk < first + count; ++kk) {
    const SmemDescriptor op = encode(SmemDescriptorFields{.start_address = kStage.offset + 32 * kk,
                                                          .leading_byte_offset = 16,
                                                          .stride_byte_offset = 1024,
                                                          .layout = UmmaLayout::Swizzle128B});
    w.tcgen05_mma(MmaKind::F16, d, op, op, Rig::idesc(), kk > 0);
  }
}

// The MMA warp reads the stage in all four k-steps and commits to kEmpty; then, with
// `reads_after_the_release`, it reads k-steps 1-3 again with no commit to kEmpty after them (a bug:
// the second load may land under those reads). Consecutive reads under one commit share a
// record; reads after a commit must not join the earlier reads' record, which that commit orders.
void k_step_reads(bool reads_after_the_release) {
  reads_between_two_loads([&](Warp& w, TmemAddr d) {
    k_steps(w, d, 0, 4);
    w.tcgen05_commit(kEmpty);
    if (reads_after_the_release) k_steps(w, d, 1, 3);
  });
}

TEST(RaceTest, KStepReadsOfAStageAreOrderedByTheCommitAfterThemOnly) {
  EXPECT_NO_THROW(k_step_reads(false));
  EXPECT_SIM_MISUSE(k_step_reads(true), Rule::RaceStageReuse);
}

// The MMA warp waits on `wait_on` before the MMA: the stage's full barrier (correct) or a barrier
// that has nothing to do with the load.
void early_read(bool wait_for_the_load) {
  Rig rig;
  rig.run([&](Warp& w) -> Task {
    co_await Rig::prologue(w, true);
    const TmemAddr d{w.ld_shared_u32(kSlot)};
    if (w.warp_idx() == 0) {
      w.mbarrier_arrive_expect_tx(kFull, 16384);
      w.tma_load(rig.map, kStage, kFull, {0, 0});
      w.mbarrier_arrive(kEmpty);
      co_await w.mbarrier_wait(kFull, 0);
    } else {
      co_await w.mbarrier_wait(wait_for_the_load ? kFull : kEmpty, 0);
      w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
      w.tcgen05_commit(kDone);
      co_await w.mbarrier_wait(kDone, 0);
      w.tcgen05_dealloc(d, 128);
    }
  });
}

TEST(RaceTest, MmaReadingALoadItDidNotWaitForIsAnEarlyRead) {
  EXPECT_NO_THROW(early_read(true));
  EXPECT_SIM_MISUSE(early_read(false), Rule::RaceEarlyRead);
}

// Generic reads (ld.shared) of a TMA-loaded stage: warp 1 waits on kFull (or, broken, on kEmpty,
// which warp 0 arrives on at once) and reads the stage; it releases the stage (kEmpty) after the
// read or, broken, before it; warp 0 then reloads the stage once it saw the release.
enum class ReadBug { None, NoWait, ReleaseBeforeRead };
void generic_read(ReadBug bug) {
  Rig rig;
  rig.run([&](Warp& w) -> Task {
    co_await Rig::prologue(w, false);
    if (w.warp_idx() == 0) {
      w.mbarrier_arrive_expect_tx(kFull, 16384);
      w.tma_load(rig.map, kStage, kFull, {0, 0});
      if (bug == ReadBug::NoWait) {
        w.mbarrier_arrive(kEmpty);
        co_await w.mbarrier_wait(kFull, 0);
        co_return;
      }
      co_await w.mbarrier_wait(kEmpty, 0);
      w.mbarrier_arrive_expect_tx(kFull, 16384);
      w.tma_load(rig.map, kStage, kFull, {0, 0});
      co_await w.mbarrier_wait(kFull, 1);
    } else {
      std::vector<std::byte> row(128);
      co_await w.mbarrier_wait(bug == ReadBug::NoWait ? kEmpty : kFull, 0);
      if (bug == ReadBug::ReleaseBeforeRead) w.mbarrier_arrive(kEmpty);
      w.ld_shared(kStage, row);
      if (bug == ReadBug::None) w.mbarrier_arrive(kEmpty);
      co_await w.sleep(2000);  // the reload lands long after the read: only the ordering is wrong
      const TmemAddr d{w.ld_shared_u32(kSlot)};
      w.tcgen05_dealloc(d, 128);
    }
  });
}

TEST(RaceTest, LdSharedOfAStageIsOrderedByItsBarriers) {
  EXPECT_NO_THROW(generic_read(ReadBug::None));
  EXPECT_SIM_MISUSE(generic_read(ReadBug::NoWait), Rule::RaceEarlyRead);
  EXPECT_SIM_MISUSE(generic_read(ReadBug::ReleaseBeforeRead), Rule::RaceStageReuse);
}

// st.shared then a TMA store of the same bytes, with or without fence.proxy.async between.
void proxy_fence(bool fenced) {
  Rig rig;
  rig.run(
      [&](Warp& w) -> Task {
        std::vector<std::byte> bytes(16384, std::byte{1});
        w.st_shared(kStage, bytes);
        if (fenced) w.fence_proxy_async();
        w.tma_store(rig.map, kStage, {0, 0});
        w.bulk_commit_group();
        co_await w.bulk_wait_group(0);
      },
      32);
}

TEST(RaceTest, TmaStoreOfGenericWritesNeedsAProxyFence) {
  EXPECT_NO_THROW(proxy_fence(true));
  EXPECT_SIM_MISUSE(proxy_fence(false), Rule::RaceMissingProxyFence);
}

// Warp 1 (MMA) writes an accumulator; warp 0 reads it with tcgen05.ld after waiting on the
// commit's barrier (correct) or on nothing; then (second phase) the MMA warp overwrites it after
// (correct) or without the reader's release.
void accumulator(bool read_after_commit, bool overwrite_after_release) {
  Rig rig;
  rig.run([&](Warp& w) -> Task {
    co_await Rig::prologue(w, false);
    const TmemAddr d{w.ld_shared_u32(kSlot)};
    if (w.warp_idx() == 1) {
      w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
      w.tcgen05_commit(kFull);
      if (overwrite_after_release) co_await w.mbarrier_wait(kEmpty, 0);
      else co_await w.sleep(2000);
      w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
      w.tcgen05_commit(kFull);
      co_await w.mbarrier_wait(kFull, 1);
      w.tcgen05_dealloc(d, 128);
    } else {
      if (read_after_commit) co_await w.mbarrier_wait(kFull, 0);
      std::vector<std::uint32_t> regs(32 * 32);
      w.tcgen05_ld(d, TmemShape::S32x32b, 32, regs);
      co_await w.tcgen05_wait_ld();
      w.mbarrier_arrive(kEmpty);
    }
  });
}

TEST(RaceTest, AccumulatorReadBeforeItsCommitAndOverwriteBeforeItsReleaseAreRaces) {
  EXPECT_NO_THROW(accumulator(true, true));
  EXPECT_SIM_MISUSE(accumulator(false, true), Rule::RaceEarlyAccumulatorRead);
  EXPECT_SIM_MISUSE(accumulator(true, false), Rule::RaceAccumulatorOverwrite);
}

TEST(RaceTest, TmaStoreSourceOverALiveBarrierIsClobbering) {
  Rig rig;
  EXPECT_SIM_MISUSE(rig.run(
                        [&](Warp& w) -> Task {
                          w.mbarrier_init(MBarrierRef{kStage.offset + 64}, 1);
                          w.tma_store(rig.map, kStage, {0, 0});
                          co_return;
                        },
                        32),
                    Rule::BarrierClobbered);
}

TEST(RaceTest, CheckingCanBeTurnedOff) {
  Simulator sim(test::unit_config(), SimOptions{.check_races = false});
  GmemAddr src = sim.gmem().alloc(128 * 128);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::BF16, .address = src, .dims = {64, 128}, .strides = {128},
                                          .box = {64, 128}, .swizzle = Swizzle::B128});
  EXPECT_NO_THROW(sim.launch("race", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 17408},
                             [&](Warp& w) -> Task {
                               std::vector<std::byte> bytes(16384);
                               w.st_shared(kStage, bytes);
                               w.tma_store(map, kStage, {0, 0});  // no fence: not checked
                               w.bulk_commit_group();
                               co_await w.bulk_wait_group(0);
                             }));
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

// A pair's MMA warp in a 2x4 cluster multicasts every stage release to the CTAs whose data it
// read: 64 arrivals per tile here, so a checker that kept only a warp's latest 64 arrivals had
// forgotten the accumulator's commit by the time the peer's epilogue read it, and reported this
// correct kernel (race-early-accumulator-read). Vector clocks forget nothing.
TEST(RaceCheckerTest, ACommitIsRememberedBehindAnyNumberOfMulticastReleases) {
  const test::Outcome o = test::bwsim("run gemm_2sm --cluster 2x4 --ctas 16 --m 1024 --n 2048 --k 512");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const test::Outcome big = test::bwsim("run gemm_2sm --cluster 4x4 --ctas 144 --m 4096 --n 4096 --k 4096");
  EXPECT_EQ(big.exit_code, 0) << big.output;
}

}  // namespace
}  // namespace bwsim

// ------------------------------------------------------------------------------------------------
// Happens-before through any chain (check/HappensBefore): orderings the one-hop checker did not
// follow (it reported these correct programs) and one it wrongly assumed (a bar.sync ordered
// finished reads before every warp, at the barrier or not).
namespace bwsim {
namespace {

constexpr MBarrierRef kRelay{24}, kRelay2{32};

// Warp 0 inits every barrier (count 1) and, if `tmem`, warp 1 allocates 128 columns; all sync.
template <class... Barriers>
Task init_all(Warp& w, bool tmem, Barriers... bars) {
  if (w.warp_idx() == 0) (w.mbarrier_init(bars, 1), ...);
  if (tmem && w.warp_idx() == 1) co_await w.tcgen05_alloc(kSlot, 128);
  co_await w.syncthreads();
}

// Warp 1 reads a TMA-loaded stage and tells warp 2 (kRelay); warp 2 releases the stage to the
// producer (kEmpty), which reloads it. The read is ordered before the reload only through warp
// 2: two barriers and a third warp. Broken: warp 2 releases 2000 cycles later without waiting
// for warp 1 (after the read on this schedule, but not ordered after it).
void relayed_release(bool relay_waits) {
  Rig rig;
  rig.run(
      [&](Warp& w) -> Task {
        co_await init_all(w, false, kFull, kEmpty, kRelay);
        if (w.warp_idx() == 0) {
          co_await load_twice(w, rig.map);
        } else if (w.warp_idx() == 1) {
          std::vector<std::byte> row(128);
          co_await w.mbarrier_wait(kFull, 0);
          w.ld_shared(kStage, row);
          w.mbarrier_arrive(kRelay);
        } else {
          if (relay_waits) co_await w.mbarrier_wait(kRelay, 0);
          else co_await w.sleep(2000);
          w.mbarrier_arrive(kEmpty);
        }
      },
      96);
}

TEST(HappensBeforeTest, AReleaseRelayedThroughAThirdWarpOrdersTheReload) {
  EXPECT_NO_THROW(relayed_release(true));
  EXPECT_SIM_MISUSE(relayed_release(false), Rule::RaceStageReuse);
}

// The same relay through the peer CTA of a 2-CTA cluster: rank 0's reader arrives on rank 1's
// kRelay, rank 1's warp 0 waits on it and arrives on rank 0's kEmpty (remote arrivals, both).
void relayed_through_peer(bool relay_waits) {
  Simulator sim(test::unit_config_16sm(), SimOptions{});
  const GmemAddr src = sim.gmem().alloc(128 * 128);
  const TensorMap map = TensorMap::tiled({.dtype = DataType::BF16, .address = src, .dims = {64, 128},
                                          .strides = {128}, .box = {64, 128}, .swizzle = Swizzle::B128});
  sim.launch("relay",
             LaunchConfig{.grid_ctas = 2, .block_threads = 64, .dynamic_smem_bytes = 1024 + 16384, .cluster = {2, 1, 1}},
             [&](Warp& w) -> Task {
               if (w.warp_idx() == 0) {
                 w.mbarrier_init(kFull, 1);
                 w.mbarrier_init(kEmpty, 1);
                 w.mbarrier_init(kRelay, 1);
                 w.fence_mbarrier_init();
               }
               w.cluster_arrive_relaxed();
               co_await w.cluster_wait();
               const bool leader = w.cluster_ctarank() == 0;
               if (leader && w.warp_idx() == 0) {
                 co_await load_twice(w, map);
               } else if (leader) {
                 std::vector<std::byte> row(128);
                 co_await w.mbarrier_wait(kFull, 0);
                 w.ld_shared(kStage, row);
                 w.mbarrier_arrive(w.mapa(kRelay, 1));
               } else if (w.warp_idx() == 0) {
                 if (relay_waits) co_await w.mbarrier_wait(kRelay, 0);
                 else co_await w.sleep(2000);
                 w.mbarrier_arrive(w.mapa(kEmpty, 0));
               }
               w.cluster_arrive();
               co_await w.cluster_wait();
             });
}

TEST(HappensBeforeTest, AReleaseRelayedThroughThePeerCtaOrdersTheReload) {
  EXPECT_NO_THROW(relayed_through_peer(true));
  EXPECT_SIM_MISUSE(relayed_through_peer(false), Rule::RaceStageReuse);
}

// Warp 1 (MMA) writes an accumulator and commits it to kFull; warps 0 and 2 read it (tcgen05.ld
// of their own lane quadrant, wait::ld) and then synchronise with each other (bar.sync 1, 64
// threads); warp 0 releases the accumulator on kEmpty after the bar.sync (correct: warp 2's read
// is ordered before the release through it) or before it (broken: nothing orders warp 2's read
// before the MMA warp's second MMA). The MMA warp issues that MMA 3000 cycles after the release,
// when both reads are long done: on this schedule no byte is wrong, and the one-hop checker,
// which took the bar.sync to order the finished reads before every warp, said nothing.
void accumulator_released_around_bar_sync(bool release_after_sync) {
  Rig rig;
  rig.run(
      [&](Warp& w) -> Task {
        co_await init_all(w, true, kFull, kEmpty, kDone);
        const TmemAddr d{w.ld_shared_u32(kSlot)};
        if (w.warp_idx() == 1) {
          w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
          w.tcgen05_commit(kFull);
          co_await w.mbarrier_wait(kEmpty, 0);
          co_await w.sleep(3000);
          w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
          w.tcgen05_commit(kDone);
          co_await w.mbarrier_wait(kDone, 0);
          w.tcgen05_dealloc(d, 128);
          co_return;
        }
        co_await w.mbarrier_wait(kFull, 0);
        std::vector<std::uint32_t> regs(32 * 32);
        w.tcgen05_ld(TmemAddr::at(32 * w.warp_idx(), d.column()), TmemShape::S32x32b, 32, regs);
        co_await w.tcgen05_wait_ld();
        if (w.warp_idx() == 0 && !release_after_sync) w.mbarrier_arrive(kEmpty);
        co_await w.bar_sync(1, 64);
        if (w.warp_idx() == 0 && release_after_sync) w.mbarrier_arrive(kEmpty);
      },
      96);
}

TEST(HappensBeforeTest, ABarSyncOrdersReadsOnlyBeforeTheWarpsThatTookPart) {
  EXPECT_NO_THROW(accumulator_released_around_bar_sync(true));
  EXPECT_SIM_MISUSE(accumulator_released_around_bar_sync(false), Rule::RaceAccumulatorOverwrite);
}

// Parity waits are judged by what the waiter knows through any chain. Warp 0 drives kFull through
// three phases, seeing each; warp 1 saw only the first. Warp 0 tells warp 2 (kRelay), warp 2
// tells warp 1 (kRelay2): warp 1 now knows all three, and its wait for parity 1 (the fourth
// phase) is right. Broken: warp 2 does not wait for warp 0, so warp 1 knows one phase of three
// and its parity names a phase long gone (stale-parity). The one-hop check, which accepted a
// peer's knowledge only through a barrier the waiter itself observed, reported the correct one.
void parity_known_through_a_chain(bool relay_waits) {
  test::run_cta(
      [&](Warp& w) -> Task {
        co_await init_all(w, false, kFull, kRelay, kRelay2);
        if (w.warp_idx() == 0) {
          for (std::uint32_t p = 0; p < 3; ++p) {
            w.mbarrier_arrive(kFull);
            co_await w.mbarrier_wait(kFull, p & 1);
            co_await w.sleep(200);
          }
          w.mbarrier_arrive(kRelay);
          co_await w.sleep(2000);
          w.mbarrier_arrive(kFull);
        } else if (w.warp_idx() == 1) {
          co_await w.mbarrier_wait(kFull, 0);
          co_await w.mbarrier_wait(kRelay2, 0);
          co_await w.mbarrier_wait(kFull, 1);
        } else {
          if (relay_waits) co_await w.mbarrier_wait(kRelay, 0);
          else co_await w.sleep(1000);
          w.mbarrier_arrive(kRelay2);
        }
      },
      96, 4096);
}

TEST(HappensBeforeTest, AParityWaitIsJudgedByThePhasesTheWarpKnowsThroughAnyChain) {
  EXPECT_NO_THROW(parity_known_through_a_chain(true));
  EXPECT_SIM_MISUSE(parity_known_through_a_chain(false), Rule::StaleParity);
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

// Warp 1 issues an MMA, commits it to kFull and then arrives on kFull (count 1) itself: the plain
// arrive lands first and completes phase 0, the commit waits for the MMA. A reader that waits for
// phase 0 is ordered after the plain arrive only, not after the MMA: its tcgen05.ld is a race.
// (Matching landings by barrier alone gave phase 0 the commit's clock and missed it.)
TEST(HappensBeforeTest, APlainArriveLandingBeforeACommitDoesNotCarryTheCommit) {
  Rig rig;
  EXPECT_SIM_MISUSE(rig.run([&](Warp& w) -> Task {
    co_await Rig::prologue(w, true);
    const TmemAddr d{w.ld_shared_u32(kSlot)};
    if (w.warp_idx() == 1) {
      w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
      w.tcgen05_commit(kFull);
      w.mbarrier_arrive(kFull);
      co_await w.mbarrier_wait(kFull, 1);  // the commit's phase
    } else {
      co_await w.mbarrier_wait(kFull, 0);
      std::vector<std::uint32_t> regs(32 * 32);
      w.tcgen05_ld(d, TmemShape::S32x32b, 32, regs);
      co_await w.tcgen05_wait_ld();
    }
  }),
                    Rule::RaceEarlyAccumulatorRead);
}

}  // namespace
}  // namespace bwsim

namespace bwsim {
namespace {

// One warp on one CTA of unit_test.yaml, race checking on.
void run_one_warp(const WarpProgram& p) {
  Simulator sim(test::unit_config(), SimOptions{});
  sim.launch("race", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 1024}, p);
}

// tcgen05.st is an access too (the attention kernels' P and dS go through TMEM): warp 0 stores
// over an accumulator warp 1's MMA writes, after waiting for its commit or not.
TEST(TmemStoreRaceTest, AStoreOverAnMmaResultBeforeItsCommitIsARace) {
  for (const bool after_commit : {true, false}) {
    auto program = [&](Rig& rig) {
      rig.run([&](Warp& w) -> Task {
        co_await Rig::prologue(w, false);
        const TmemAddr d{w.ld_shared_u32(kSlot)};
        if (w.warp_idx() == 1) {
          w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
          w.tcgen05_commit(kFull);
          co_await w.mbarrier_wait(kEmpty, 0);
          w.tcgen05_dealloc(d, 128);
        } else {
          if (after_commit) co_await w.mbarrier_wait(kFull, 0);
          std::vector<std::uint32_t> regs(32 * 32);
          w.tcgen05_st(d, TmemShape::S32x32b, 32, regs);
          co_await w.tcgen05_wait_st();
          w.mbarrier_arrive(kEmpty);
        }
      });
    };
    Rig rig;
    if (after_commit)
      EXPECT_NO_THROW(program(rig));
    else
      EXPECT_SIM_MISUSE(program(rig), Rule::RaceAccumulatorOverwrite);
  }
}

// Warp 0 stores P (16-bit pairs) into columns 64.. and hands it to the MMA warp, after
// tcgen05.wait::st (correct) or straight after the store; warp 1's TS-form MMA reads it as A.
void p_through_tmem(bool wait_st) {
  Rig rig;
  rig.run([&](Warp& w) -> Task {
    co_await Rig::prologue(w, true);
    const TmemAddr d{w.ld_shared_u32(kSlot)};
    if (w.warp_idx() == 0) {
      std::vector<std::uint32_t> p(32 * 8);
      w.tcgen05_st(d + 64, TmemShape::S32x32b, 8, p);
      if (wait_st) co_await w.tcgen05_wait_st();
      w.tcgen05_fence_before_thread_sync();
      w.mbarrier_arrive(kFull);
      if (!wait_st) co_await w.tcgen05_wait_st();
    } else {
      co_await w.mbarrier_wait(kFull, 0);
      w.tcgen05_fence_after_thread_sync();
      w.tcgen05_mma(MmaKind::F16, d, d + 64, Rig::operand(), encode(MmaKind::F16, {.m = 128, .n = 64}), false);
      w.tcgen05_commit(kDone);
      co_await w.mbarrier_wait(kDone, 0);
      w.tcgen05_dealloc(d, 128);
    }
  });
}

TEST(TmemStoreRaceTest, AnMmaReadingItsAOperandFromTmemNeedsTheStoresWaitAndRelease) {
  EXPECT_NO_THROW(p_through_tmem(true));
  EXPECT_SIM_MISUSE(p_through_tmem(false), Rule::RaceEarlyRead);
}

// Warps 0 and 4 share TMEM lane quadrant 0, warp 1 has quadrant 1. Warp 0 reads (or, `first_store`,
// writes) columns 0..31; warp `writer` then stores over them, ordered by a bar.sync of the two
// after warp 0's wait::ld / wait::st (`synced`) or not: another quadrant's lanes never conflict,
// the same quadrant's do (the backward's two compute warpgroups: P over S, dS over dP).
void store_over_a_read(std::uint32_t writer, bool synced, bool first_store = false) {
  Simulator sim(test::unit_config(), SimOptions{});
  sim.launch("race", LaunchConfig{.grid_ctas = 1, .block_threads = 160, .dynamic_smem_bytes = 1024},
             [&](Warp& w) -> Task {
               if (w.warp_idx() == 2) co_await w.tcgen05_alloc(kSlot, 128);
               co_await w.syncthreads();
               const TmemAddr d{w.ld_shared_u32(kSlot)};
               std::vector<std::uint32_t> regs(32 * 32);
               if (w.warp_idx() == 0) {
                 if (first_store) {
                   w.tcgen05_st(d, TmemShape::S32x32b, 32, regs);
                   co_await w.tcgen05_wait_st();
                 } else {
                   w.tcgen05_ld(d, TmemShape::S32x32b, 32, regs);
                   co_await w.tcgen05_wait_ld();
                 }
                 if (synced) co_await w.bar_sync(1, 64);
               } else if (w.warp_idx() == writer) {
                 const TmemAddr lanes = TmemAddr::at(32 * (writer % 4), d.column());
                 if (synced) co_await w.bar_sync(1, 64);
                 else co_await w.sleep(500);
                 w.tcgen05_st(lanes, TmemShape::S32x32b, 32, regs);
                 co_await w.tcgen05_wait_st();
               }
               co_await w.syncthreads();
               if (w.warp_idx() == 2) w.tcgen05_dealloc(d, 128);
             });
}

TEST(TmemStoreRaceTest, AStoreOverColumnsAnotherWarpOfItsQuadrantReadNeedsOrdering) {
  EXPECT_NO_THROW(store_over_a_read(4, true));
  EXPECT_SIM_MISUSE(store_over_a_read(4, false), Rule::RaceStageReuse);
  EXPECT_NO_THROW(store_over_a_read(1, false));  // other lanes
}

TEST(TmemStoreRaceTest, AStoreOverAnotherWarpsStoreOfItsQuadrantNeedsOrdering) {
  EXPECT_NO_THROW(store_over_a_read(4, true, true));
  EXPECT_SIM_MISUSE(store_over_a_read(4, false, true), Rule::RaceStageReuse);
  EXPECT_NO_THROW(store_over_a_read(1, false, true));
}

// A warp reading back what it stored: after tcgen05.wait::st, or (a race) before it.
TEST(TmemStoreRaceTest, AWarpReadsItsOwnStoreOnlyAfterWaitSt) {
  for (const bool wait : {true, false}) {
    auto program = [wait] {
      run_one_warp([wait](Warp& w) -> Task {
        co_await w.tcgen05_alloc(kSlot, 32);
        const TmemAddr d{w.ld_shared_u32(kSlot)};
        std::vector<std::uint32_t> regs(32 * 32);
        w.tcgen05_st(d, TmemShape::S32x32b, 32, regs);
        if (wait) co_await w.tcgen05_wait_st();
        w.tcgen05_ld(d, TmemShape::S32x32b, 32, regs);
        co_await w.tcgen05_wait_ld();
        co_await w.tcgen05_wait_st();
        w.tcgen05_dealloc(d, 32);
      });
    };
    if (wait)
      EXPECT_NO_THROW(program());
    else
      EXPECT_SIM_MISUSE(program(), Rule::RaceEarlyRead);
  }
}

}  // namespace
}  // namespace bwsim
