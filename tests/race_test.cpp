// The async race checker (check/RaceChecker) on small scenarios, unit_test.yaml: each race rule
// fires on the broken ordering and stays silent on the correct one.
#include <gtest/gtest.h>

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

// Warp 0 loads the stage twice; warp 1 runs one MMA on the first load. `release_with_commit`:
// the MMA warp frees the stage with tcgen05.commit (correct) or with a plain arrive right after
// issuing the MMA (the MMA may still be reading when the second load lands).
void stage_reuse(bool release_with_commit) {
  Rig rig;
  rig.run([&](Warp& w) -> Task {
    co_await Rig::prologue(w, true);
    const TmemAddr d{w.ld_shared_u32(kSlot)};
    if (w.warp_idx() == 0) {
      w.mbarrier_arrive_expect_tx(kFull, 16384);
      w.tma_load(rig.map, kStage, kFull, {0, 0});
      co_await w.mbarrier_wait(kEmpty, 0);
      w.mbarrier_arrive_expect_tx(kFull, 16384);
      w.tma_load(rig.map, kStage, kFull, {0, 0});
      co_await w.mbarrier_wait(kFull, 1);
    } else {
      co_await w.mbarrier_wait(kFull, 0);
      w.tcgen05_mma(MmaKind::F16, d, Rig::operand(), Rig::operand(), Rig::idesc(), false);
      if (release_with_commit) w.tcgen05_commit(kEmpty);
      else w.mbarrier_arrive(kEmpty);
      w.tcgen05_commit(kDone);
      co_await w.mbarrier_wait(kDone, 0);
      w.tcgen05_dealloc(d, 128);
    }
  });
}

TEST(RaceTest, StageReleasedBeforeTheMmaCompletedIsReused) {
  EXPECT_NO_THROW(stage_reuse(true));
  EXPECT_SIM_MISUSE(stage_reuse(false), Rule::RaceStageReuse);
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
// correct kernel (race-early-accumulator-read). Arrivals are now kept while their barrier is
// within a few phases of them.
TEST(RaceCheckerTest, ACommitIsRememberedBehindAnyNumberOfMulticastReleases) {
  const test::Outcome o = test::bwsim("run gemm_2sm --cluster 2x4 --ctas 16 --m 1024 --n 2048 --k 512");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const test::Outcome big = test::bwsim("run gemm_2sm --cluster 4x4 --ctas 144 --m 4096 --n 4096 --k 4096");
  EXPECT_EQ(big.exit_code, 0) << big.output;
}

}  // namespace
}  // namespace bwsim
