// The L2 replacement policies (config l2.policy), each chosen by name, on access patterns whose
// hits are worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "TestSupport.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"
#include "bwsim/hw/memory/L2SetIndex.hpp"
#include "bwsim/kernel/ModelChoices.hpp"

namespace bwsim {
namespace {

std::unique_ptr<L2Policy> policy(const char* name, std::uint64_t blocks, std::uint32_t ways = 0, std::uint32_t line_bytes = 128,
                                 std::uint64_t page_bytes = 0) {
  return l2_policies().at(name).make(blocks, L2SetGeometry{ways, line_bytes, 8, page_bytes});
}

// Hits of `keys` (block numbers, 1 KiB apart) touched one by one.
std::uint32_t hits(L2Policy& l2, std::initializer_list<char> keys) {
  std::uint32_t n = 0;
  for (const char k : keys) n += l2.access_one(static_cast<std::uint64_t>(k) * 1024).hit ? 1 : 0;
  return n;
}

TEST(L2PolicyTest, LruEvictsTheLeastRecentlyUsedBlock) {
  const auto l2 = policy("lru", 2);
  EXPECT_FALSE(l2->access_one(0xa00).hit);  // [a]
  EXPECT_FALSE(l2->access_one(0xb00).hit);  // [b a]
  EXPECT_TRUE(l2->access_one(0xa00).hit);   // [a b]
  EXPECT_FALSE(l2->access_one(0xc00).hit);  // evicts b: [c a]
  EXPECT_TRUE(l2->access_one(0xa00).hit);   // [a c]
  EXPECT_FALSE(l2->access_one(0xb00).hit);  // evicts c: [b a]
  EXPECT_FALSE(l2->access_one(0xc00).hit);  // evicts a: [c b]
  EXPECT_TRUE(l2->access_one(0xb00).hit);
  EXPECT_EQ(l2->resident_blocks(), 2u);
}

TEST(L2PolicyTest, ManyKeysThroughASmallLruKeepExactlyTheNewest) {
  const auto l2 = policy("lru", 100);
  for (std::uint64_t k = 0; k < 10000; ++k) l2->access_one(k * 1024);
  for (std::uint64_t k = 9900; k < 10000; ++k) EXPECT_TRUE(l2->access_one(k * 1024).hit) << k;
  EXPECT_FALSE(l2->access_one(9899 * 1024).hit);
}

// The block index stores a 32-bit tag per key (its 128-byte line number): keys 512 GiB apart, or
// two within one line (tensors need only 16-byte alignment), share a tag and are still told
// apart, held, hit and evicted as the blocks they are, by both policies that use the index.
TEST(L2PolicyTest, KeysThatShareTheIndexTagAreStillDistinctBlocks) {
  constexpr std::uint64_t kBase = 0x7f0000000000ull, kTagWrap = 1ull << 39;
  for (const char* name : {"lru", "clock"}) {
    SCOPED_TRACE(name);
    const auto l2 = policy(name, 3);
    const std::uint64_t a = kBase, far = kBase + kTagWrap, near = kBase + 64;
    EXPECT_FALSE(l2->access_one(a).hit);
    EXPECT_FALSE(l2->access_one(far).hit);
    EXPECT_FALSE(l2->access_one(near).hit);
    EXPECT_EQ(l2->resident_blocks(), 3u);
    EXPECT_TRUE(l2->access_one(far).hit);
    EXPECT_TRUE(l2->access_one(a).hit);
    EXPECT_TRUE(l2->access_one(near).hit);
    // A fourth key evicts one of the three (lru: far, the least recent; clock: the first clear
    // bit after a sweep that clears all three, a); the other two still hit.
    EXPECT_FALSE(l2->access_one(kBase + 2 * kTagWrap).hit);
    const std::uint64_t evicted = std::string_view(name) == "lru" ? far : a;
    for (const std::uint64_t k : {a, far, near})
      if (k != evicted) {
        EXPECT_TRUE(l2->access_one(k).hit) << std::hex << k;
      }
    EXPECT_FALSE(l2->access_one(evicted).hit);
  }
}

// A B C C A D E C A on 3 blocks.
//
// lru (most recent first):            clock (ring f0 f1 f2, * = reference bit, ^ = hand):
//   A miss [A]                           A miss  ^A  .  .
//   B miss [B A]                         B miss  ^A  B  .
//   C miss [C B A]                       C miss  ^A  B  C    (full: the hand at the oldest, A)
//   C hit  [C B A]                       C hit   ^A  B  C*
//   A hit  [A C B]                       A hit   ^A* B  C*
//   D miss, evicts B: [D A C]            D miss: A* loses its bit, B is clear: evicts B   A  D ^C*
//   E miss, evicts C: [E D A]            E miss: C* loses its bit, A is clear: evicts A   E ^D  C
//   C miss, evicts A: [C E D]            C hit (C stayed: its second chance)            E ^D  C*
//   A miss, evicts D: [A C E]            A miss: D is clear: evicts D                   E  A ^C*
// lru: 2 hits (C, A); clock: 3 (C, A, C). LRU judges C by its last use (before A's), so E evicts
// it; clock only knows C was used since the hand last passed, so E evicts A, whose bit the D
// sweep had just cleared.
// Thousands of hits on two of three blocks: the recency log fills with stale touches and is
// compacted several times, and the untouched block is still the one evicted.
TEST(L2PolicyTest, LruKeepsItsOrderThroughLongRunsOfHits) {
  const auto l2 = policy("lru", 3);
  EXPECT_EQ(hits(*l2, {'a', 'b', 'c'}), 0u);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(hits(*l2, {'a', 'c'}), 2u);  // [b a c]
  EXPECT_EQ(hits(*l2, {'d'}), 0u);  // evicts b: [a c d]
  EXPECT_EQ(hits(*l2, {'c'}), 1u);  // [a d c]
  EXPECT_EQ(hits(*l2, {'b'}), 0u);  // evicts a: [d c b]
  EXPECT_EQ(hits(*l2, {'a'}), 0u);  // evicts d: [c b a]
  EXPECT_EQ(hits(*l2, {'c', 'b', 'a'}), 3u);
}

TEST(L2PolicyTest, LruAndClockHitTheHandCountsOnAPatternWhereTheyDiffer) {
  const auto lru = policy("lru", 3);
  const auto clock = policy("clock", 3);
  EXPECT_EQ(hits(*lru, {'A', 'B', 'C', 'C', 'A', 'D', 'E', 'C', 'A'}), 2u);
  EXPECT_EQ(hits(*clock, {'A', 'B', 'C', 'C', 'A', 'D', 'E', 'C', 'A'}), 3u);
  // Then F E A. lru [A C E]: F evicts E, E evicts C, A hits (1). clock E A ^C*: F clears C's bit
  // and evicts E (F ^A C), E evicts A (F E ^C), A misses (0).
  EXPECT_EQ(hits(*lru, {'F', 'E', 'A'}), 1u);
  EXPECT_EQ(hits(*clock, {'F', 'E', 'A'}), 0u);
}

// The same pattern through the simulator, the policy chosen in the config: one warp loads nine
// 1 KiB boxes (8 rows of 128 bytes: one block each) one after the other from a tensor of five
// row groups, on an L2 of 3 blocks. Each hit is 1 KiB of l2_hit_bytes.
// set_rrip with one set of 4 ways: a block comes in predicted 2, a hit predicts 0, and a miss in a
// full set ages every way until one is 3 and evicts the first such way.
//   A B C D miss            [A2 B2 C2 D2]
//   A hit                   [A0 B2 C2 D2]
//   E miss: aged by 1       [A1 B3 C3 D3], evicts B: [A1 E2 C3 D3]
//   F miss: C is 3          [A1 E2 F2 D3]
//   B miss: D is 3          [A1 E2 F2 B2]
//   A hit                   [A0 E2 F2 B2]
//   C miss: aged by 1       [A1 E3 F3 B3], evicts E: [A1 C2 F3 B3]
//   E miss: F is 3          [A1 C2 E2 B3]
TEST(L2PolicyTest, SetRripEvictsTheFirstWayPredictedDistantAgingTheSetUntilOneIs) {
  const auto l2 = policy("set_rrip", 4, 4);
  EXPECT_EQ(hits(*l2, {'A', 'B', 'C', 'D'}), 0u);
  EXPECT_EQ(hits(*l2, {'A'}), 1u);
  EXPECT_EQ(hits(*l2, {'E', 'F', 'B'}), 0u);
  EXPECT_EQ(hits(*l2, {'A'}), 1u);
  EXPECT_EQ(hits(*l2, {'C', 'E'}), 0u);
  EXPECT_EQ(hits(*l2, {'A', 'C', 'E', 'B'}), 4u);
  EXPECT_EQ(hits(*l2, {'F'}), 0u);
  EXPECT_EQ(l2->resident_blocks(), 4u);
}

// set_lru with one set of 4 ways, the pattern of h200_l2_reref.csv: X = {A, B} read twice, then
// Y = {C, D} once, then two new blocks E F. Least recently used goes first: E evicts A (last read
// at t3), F evicts B (t4), and Y stays [C D E F]. set_rrip keeps the re-read X (A B predicted 0)
// and ages C, D to 3: E evicts C, F evicts D, so Y is gone [A B E F]; the H200 does as set_lru.
TEST(L2PolicyTest, SetLruDropsATwiceReadBlockBeforeANewerOnceReadOne) {
  const auto lru = policy("set_lru", 4, 4);
  const auto rrip = policy("set_rrip", 4, 4);
  for (L2Policy* l2 : {lru.get(), rrip.get()}) {
    EXPECT_EQ(hits(*l2, {'A', 'B', 'A', 'B'}), 2u);
    EXPECT_EQ(hits(*l2, {'C', 'D', 'E', 'F'}), 0u);
    EXPECT_EQ(l2->resident_blocks(), 4u);
  }
  EXPECT_EQ(hits(*lru, {'C', 'D', 'E', 'F'}), 4u);
  EXPECT_EQ(hits(*rrip, {'A', 'B', 'E', 'F'}), 4u);
}

// A hit makes a block the most recent: A B C D, then A hits, so E evicts B (not A, as a FIFO
// within the set would), and C D A E all hit after it; B then misses.
TEST(L2PolicyTest, SetLruCountsAHitAsAUse) {
  const auto l2 = policy("set_lru", 4, 4);
  EXPECT_EQ(hits(*l2, {'A', 'B', 'C', 'D', 'A', 'E'}), 1u);
  EXPECT_EQ(hits(*l2, {'C', 'D', 'A', 'E'}), 4u);
  EXPECT_EQ(hits(*l2, {'B'}), 0u);
}

// The set policies' sets: 4096 blocks of 16 ways are 256 sets, indexed by the line address folded onto
// 8 bits by XOR. A run of 4096 consecutive lines puts exactly 16 in each set, and so do 4096
// lines 1 MiB apart (line k << 13: bits 3..10 of k land on the set bits unchanged, bits 0..2 and
// 11 XOR onto them, a bijection for each of their 16 values), so a second pass over either hits
// every line; a hashed index would overfill some sets and miss there. Two lines of one set far
// apart keep apart (the tags are the bits above the set, exact).
TEST(L2PolicyTest, TheSetPoliciesSpreadRunsOfLinesAndPowerOfTwoStridesEvenlyOverTheirSets) {
  for (const char* name : {"set_lru", "set_rrip"}) {
    for (const std::uint64_t stride : {std::uint64_t{128}, std::uint64_t{1} << 20}) {
      const auto l2 = policy(name, 4096, 16);
      for (std::uint64_t k = 0; k < 4096; ++k) EXPECT_FALSE(l2->access_one(k * stride).hit);
      std::uint32_t second = 0;
      for (std::uint64_t k = 0; k < 4096; ++k) second += l2->access_one(k * stride).hit ? 1 : 0;
      EXPECT_EQ(second, 4096u) << name << " " << stride;
      EXPECT_EQ(l2->resident_blocks(), 4096u);
    }
    const auto l2 = policy(name, 4096, 16);
    // Lines 0 and 2^33 + 2 (bit 33 folds onto bit 1, cancelling it): both in set 0.
    const std::uint64_t a = 0, b = ((std::uint64_t{1} << 33) + 2) * 128;
    EXPECT_FALSE(l2->access_one(a).hit);
    EXPECT_FALSE(l2->access_one(b).hit);
    EXPECT_TRUE(l2->access_one(a).hit);
    EXPECT_TRUE(l2->access_one(b).hit);
    // With 64-byte lines, neighbouring lines are different blocks (the index's unit is the config's line).
    const auto l2_64 = policy(name, 4096, 16, 64);
    EXPECT_FALSE(l2_64->access_one(0).hit);
    EXPECT_FALSE(l2_64->access_one(64).hit);
    EXPECT_TRUE(l2_64->access_one(0).hit);
    EXPECT_EQ(l2_64->resident_blocks(), 2u);
  }
}

// Pages whose frames scatter (l2.page_bytes): 2048 sets (11 bits), a 2 MiB page 16384 lines (14
// bits). The blocks of two whole pages of a tensor whose rows are 2^p lines apart (block keys: rows
// a multiple of 8, so 3 zero bits from bit p) fill every set equally whatever p is, two a set (one
// a page) up to p = 11, where a page holds one row of 2^p lines, 2^p blocks: the in-page hash sends
// the 11 remaining bits onto the 11 set bits. XOR-folding the in-page bits alone would not (p = 6,
// 8 KiB rows: the set bits 6..8 stay zero, 256 of the 2048 sets). A contiguous run of 2^11 lines
// within a page takes every set once.
TEST(L2PolicyTest, ScatteredPagesFillEverySetEquallyWhateverTheRowPitch) {
  const L2SetIndex index(11, 128, 8, 2097152);
  for (std::uint32_t p = 0; p < 14; ++p) {
    std::vector<std::uint32_t> load(2048, 0);
    const std::uint64_t pitch = std::uint64_t{1} << p;  // lines
    for (std::uint64_t page = 5; page < 7; ++page)
      for (std::uint64_t row = 0; row * pitch < 16384; row += 8)
        for (std::uint64_t col = 0; col < std::min<std::uint64_t>(pitch, 16384); ++col)
          ++load[index(page * 16384 + row * pitch + col)];
    const std::uint32_t each = p <= 11 ? 2 : 2 << (p - 11);
    EXPECT_EQ(*std::min_element(load.begin(), load.end()), each) << "rows 2^" << p << " lines apart";
    EXPECT_EQ(*std::max_element(load.begin(), load.end()), each) << "rows 2^" << p << " lines apart";
  }
  std::vector<bool> seen(2048, false);
  for (std::uint64_t line = 3 * 16384 + 2048; line < 3 * 16384 + 4096; ++line) seen[index(line)] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 2048);
}

// The same through a set policy (4096 blocks of 16 ways: 256 sets, 8 bits; 2 MiB pages): 4096
// consecutive lines of one page fill every set with 16 and a second pass hits every one, as with
// folded sets. 64-line windows at the start of 64 pages (4096 lines again) are where the two part:
// folded, page p's window takes the 64 sets of group p mod 4 (bits 6..7 of the page bits' fold), 16
// windows a group, and every line hits again; scattered, each page's frame picks the group, 64
// draws of 4 groups overfill some (a set of more than 16 lines read in turn misses every time) and
// leave others room: some lines miss, and the second pass is not all hits.
TEST(L2PolicyTest, ScatteredPagesKeepWholePagesAndLoseSomeWindowsOfManyPages) {
  auto second_pass_hits = [](std::uint64_t page_bytes, const std::vector<std::uint64_t>& lines) {
    const auto l2 = policy("set_lru", 4096, 16, 128, page_bytes);
    for (const std::uint64_t line : lines) l2->access_one(line * 128);
    std::uint32_t hits = 0;
    for (const std::uint64_t line : lines) hits += l2->access_one(line * 128).hit ? 1 : 0;
    return hits;
  };
  std::vector<std::uint64_t> page, windows;
  for (std::uint64_t l = 0; l < 4096; ++l) page.push_back(3 * 16384 + l);
  for (std::uint64_t p = 0; p < 64; ++p)
    for (std::uint64_t l = 0; l < 64; ++l) windows.push_back(p * 16384 + l);
  EXPECT_EQ(second_pass_hits(0, page), 4096u);
  EXPECT_EQ(second_pass_hits(2097152, page), 4096u);
  EXPECT_EQ(second_pass_hits(0, windows), 4096u);
  const std::uint32_t scattered = second_pass_hits(2097152, windows);
  EXPECT_LT(scattered, 4096u);
  EXPECT_EQ(scattered, 576u);  // one group drew 9 pages (576 lines), the others more than 16
}

TEST(L2PolicyTest, TheConfigChoosesThePolicyTheMemorySystemUses) {
  for (const auto& [name, expect_hits] : {std::pair{"lru", 2u}, std::pair{"clock", 3u}}) {
    const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml",
                                           {"l2.bytes=3072", std::string("l2.policy=") + name});
    Simulator sim(cfg, SimOptions{.mode = Mode::Timing});
    const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = sim.gmem().alloc(5 * 1024),
                                            .dims = {128, 40}, .strides = {128}, .box = {128, 8}});
    const RunResult r = sim.launch(
        "l2", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 4096}, [&](Warp& w) -> Task {
          const MBarrierRef bar{0};
          w.mbarrier_init(bar, 1);
          std::uint32_t phase = 0;
          for (const int block : {0, 1, 2, 2, 0, 3, 4, 2, 0}) {  // A B C C A D E C A
            w.mbarrier_arrive_expect_tx(bar, 1024);
            w.tma_load(map, SmemAddr{1024}, bar, {0, 8 * block});
            co_await w.mbarrier_wait(bar, phase);
            phase ^= 1;
          }
        });
    EXPECT_EQ(r.memory.l2_read_bytes, 9u * 1024) << name;
    EXPECT_EQ(r.memory.l2_hit_bytes, expect_hits * 1024) << name;
  }
}

TEST(L2PolicyTest, AnUnknownPolicyIsAConfigErrorListingTheValidOnes) {
  const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"l2.policy=mru"});
  test::expect_simulator_config_error(
      cfg, "unit_test.yaml: l2.policy: unknown model 'mru'; the valid names are lru, clock, set_lru, set_rrip");
  EXPECT_THROW(model_choices(cfg), ConfigError);
  test::expect_bad_input("run tma_copy --config " BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml --set hbm.model=banked",
                         "hbm.model: unknown model 'banked'; the valid names are fifo_link, loaded_link");
  test::expect_bad_input("describe-config " BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml --set l2.policy=mru",
                         "the valid names are lru, clock, set_lru, set_rrip");
}

TEST(L2PolicyTest, DescribeConfigShowsTheChosenModelsAndTheAlternatives) {
  const test::Outcome o = test::bwsim("describe-config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --set l2.policy=clock");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("clock  (--set)  (models: lru, clock, set_lru, set_rrip)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("fifo_link  (models: fifo_link, loaded_link)"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace bwsim
