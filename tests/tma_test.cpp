// The TMA unit: tensor-map validation, the swizzle placement of every mode against hand tables,
// OOB fill, store clipping, element strides, higher ranks, bulk async-groups and exact timing
// on the unit-test config (TMA issue 2, 64 B/cycle, load latency 100, store latency 50).
#include <gtest/gtest.h>

#include <cstring>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/memory/TensorCopy.hpp"

namespace bwsim {
namespace {

// A functional simulator with one tensor in GMEM and helpers to launch one-warp programs.
struct TmaBench {
  Simulator sim{test::unit_config(), SimOptions{.mode = Mode::Functional}};

  GmemAddr alloc_filled(std::uint64_t bytes, std::uint8_t (*value)(std::uint64_t)) {
    const GmemAddr a = sim.gmem().alloc(bytes);
    auto span = sim.gmem().bytes(a, bytes);
    for (std::uint64_t i = 0; i < bytes; ++i) span[i] = std::byte{value(i)};
    return a;
  }
  RunResult run(const WarpProgram& p, std::uint32_t smem = 32768) {
    return sim.launch("tma-test", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = smem}, p);
  }
};

constexpr MBarrierRef kBar{0};
constexpr SmemAddr kDst{1024};

// Loads one box into SMEM at kDst and copies the SMEM bytes out.
std::vector<std::uint8_t> load_box(TmaBench& b, const TensorMap& map, TensorCoords at) {
  std::vector<std::uint8_t> smem(map.box_bytes());
  b.run([&](Warp& w) -> Task {
    w.mbarrier_init(kBar, 1);
    w.mbarrier_arrive_expect_tx(kBar, map.box_bytes());
    w.tma_load(map, kDst, kBar, at);
    co_await w.mbarrier_wait(kBar, 0);
    std::memcpy(smem.data(), w.cta().smem().bytes(kDst.offset, map.box_bytes()).data(), smem.size());
  });
  return smem;
}

// Tensor of `rows` rows of `row_bytes` u8 where every 16-byte chunk holds row * 16 + chunk.
TensorMap chunk_tensor(TmaBench& b, std::uint32_t rows, std::uint32_t row_bytes, Swizzle sw) {
  const GmemAddr a = b.sim.gmem().alloc(static_cast<std::uint64_t>(rows) * row_bytes);
  auto span = b.sim.gmem().bytes(a, static_cast<std::uint64_t>(rows) * row_bytes);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t i = 0; i < row_bytes; ++i) span[r * row_bytes + i] = std::byte(r * 16 + i / 16);
  return TensorMap::tiled({.dtype = DataType::U8, .address = a, .dims = {row_bytes, rows}, .strides = {row_bytes},
                           .box = {row_bytes, rows}, .elem_strides = {}, .swizzle = sw, .oob_fill = OobFill::Zero});
}

// table[r][p]: which logical 16-byte chunk of row r the hardware places at chunk position p.
template <std::size_t R, std::size_t C>
void expect_placement(const std::vector<std::uint8_t>& smem, const std::uint8_t (&table)[R][C]) {
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t p = 0; p < C; ++p)
      for (std::size_t byte = 0; byte < 16; ++byte)
        ASSERT_EQ(smem[r * C * 16 + p * 16 + byte], r * 16 + table[r][p]) << "row " << r << " position " << p;
}

TEST(SwizzleTest, Swizzle128BPlacesChunksByTheHandTable) {
  TmaBench b;
  const std::uint8_t table[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5},
                                    {3, 2, 1, 0, 7, 6, 5, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
                                    {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
  expect_placement(load_box(b, chunk_tensor(b, 8, 128, Swizzle::B128), {0, 0}), table);
}

TEST(SwizzleTest, Swizzle64BPlacesChunksByTheHandTable) {
  TmaBench b;
  // 64-byte rows: address bits 7-8 are row bits 1-2, so rows pair up.
  const std::uint8_t table[8][4] = {{0, 1, 2, 3}, {0, 1, 2, 3}, {1, 0, 3, 2}, {1, 0, 3, 2},
                                    {2, 3, 0, 1}, {2, 3, 0, 1}, {3, 2, 1, 0}, {3, 2, 1, 0}};
  expect_placement(load_box(b, chunk_tensor(b, 8, 64, Swizzle::B64), {0, 0}), table);
}

TEST(SwizzleTest, Swizzle32BPlacesChunksByTheHandTable) {
  TmaBench b;
  const std::uint8_t table[8][2] = {{0, 1}, {0, 1}, {0, 1}, {0, 1}, {1, 0}, {1, 0}, {1, 0}, {1, 0}};
  expect_placement(load_box(b, chunk_tensor(b, 8, 32, Swizzle::B32), {0, 0}), table);
}

TEST(SwizzleTest, NoSwizzleIsRowMajor) {
  TmaBench b;
  const std::uint8_t table[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}};
  expect_placement(load_box(b, chunk_tensor(b, 2, 128, Swizzle::None), {0, 0}), table);
}

TEST(SwizzleTest, AddressFunctionMatchesTheReferenceFormula) {
  EXPECT_EQ(swizzle_offset(Swizzle::B128, 0x0a0), 0x0b0u);  // row 1, chunk 2 -> chunk 3
  EXPECT_EQ(swizzle_offset(Swizzle::B128, 0x380), 0x3f0u);  // row 7, chunk 0 -> chunk 7
  EXPECT_EQ(swizzle_offset(Swizzle::B64, 0x180), 0x1b0u);   // bits 7-8 = 3 -> chunk ^ 3
  EXPECT_EQ(swizzle_offset(Swizzle::B32, 0x090), 0x080u);
  EXPECT_EQ(swizzle_alignment(Swizzle::B128), 1024u);
  EXPECT_EQ(swizzle_alignment(Swizzle::B64), 512u);
  EXPECT_EQ(swizzle_alignment(Swizzle::B32), 256u);
  EXPECT_EQ(swizzle_alignment(Swizzle::None), 128u);
}

// 10 x 40 f32 tensor whose element (r, c) holds r * 100 + c.
TensorMap small_f32(TmaBench& b, OobFill fill) {
  const GmemAddr a = b.sim.gmem().alloc(10 * 160);
  auto span = b.sim.gmem().bytes(a, 10 * 160);
  for (std::uint32_t r = 0; r < 10; ++r)
    for (std::uint32_t c = 0; c < 40; ++c) {
      const float v = static_cast<float>(r * 100 + c);
      std::memcpy(&span[r * 160 + c * 4], &v, 4);
    }
  return TensorMap::tiled({.dtype = DataType::F32, .address = a, .dims = {40, 10}, .strides = {160}, .box = {16, 16},
                           .elem_strides = {}, .swizzle = Swizzle::None, .oob_fill = fill});
}

float f32_at(const std::vector<std::uint8_t>& s, std::size_t i) {
  float v;
  std::memcpy(&v, &s[i * 4], 4);
  return v;
}

TEST(TmaLoadTest, ElementsOutsideTheTensorAreZeroFilled) {
  TmaBench b;
  const TensorMap map = small_f32(b, OobFill::Zero);
  const auto smem = load_box(b, map, {32, 8});  // cols 32..47 (40.. outside), rows 8..23 (10.. outside)
  for (std::uint32_t r = 0; r < 16; ++r)
    for (std::uint32_t c = 0; c < 16; ++c) {
      const bool inside = 32 + c < 40 && 8 + r < 10;
      ASSERT_EQ(f32_at(smem, r * 16 + c), inside ? static_cast<float>((8 + r) * 100 + 32 + c) : 0.0f)
          << r << "," << c;
    }
}

TEST(TmaLoadTest, NegativeCoordinatesFillTheLeadingElements) {
  TmaBench b;
  const TensorMap map = small_f32(b, OobFill::Zero);
  const auto smem = load_box(b, map, {-4, -2});
  EXPECT_EQ(f32_at(smem, 0), 0.0f);
  EXPECT_EQ(f32_at(smem, 2 * 16 + 3), 0.0f);
  EXPECT_EQ(f32_at(smem, 2 * 16 + 4), 0.0f + 0);         // element (0, 0)
  EXPECT_EQ(f32_at(smem, 3 * 16 + 5), 100.0f + 1);       // element (1, 1)
  EXPECT_EQ(f32_at(smem, 11 * 16 + 15), 900.0f + 11);    // element (9, 11)
  EXPECT_EQ(f32_at(smem, 12 * 16 + 15), 0.0f);           // row 10: outside
}

TEST(TmaLoadTest, NanRequestZeroFmaFillsCanonicalNaN) {
  TmaBench b;
  const TensorMap map = small_f32(b, OobFill::NanRequestZeroFma);
  const auto smem = load_box(b, map, {32, 0});
  std::uint32_t bits;
  std::memcpy(&bits, &smem[8 * 4], 4);  // column 40: outside
  EXPECT_EQ(bits, 0x7fffffffu);
  EXPECT_EQ(f32_at(smem, 7), 39.0f);
}

TEST(TmaLoadTest, ElementStridesSkipElements) {
  TmaBench b;
  const GmemAddr a = b.alloc_filled(64 * 4, [](std::uint64_t i) { return static_cast<std::uint8_t>(i); });
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U32, .address = a, .dims = {16, 4}, .strides = {64},
                                          .box = {8, 2}, .elem_strides = {2, 1}, .swizzle = Swizzle::None,
                                          .oob_fill = OobFill::Zero});
  EXPECT_EQ(map.box_elems(0), 4u);
  EXPECT_EQ(map.box_bytes(), 32u);
  const auto smem = load_box(b, map, {2, 1});
  // Row 1, columns 2, 4, 6, 8: byte offsets 64 + 8, 64 + 16, ...
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(smem[i * 4], 64 + 8 + 8 * i);
  EXPECT_EQ(smem[16], 128 + 8);  // row 2, column 2
}

// CUtensorMapDataType 16U4_ALIGN16B / 16U6_ALIGN16B / 16U4_ALIGN8B: each group of 16 packed
// elements (8 or 12 GMEM bytes) starts a 16- or 8-byte SMEM slot; the padding and groups past the
// tensor's end are zero. A 2-row tensor of 48 elements, GMEM byte i holding i + 1, box 64 x 2.
TEST(TmaLoadTest, PackedFp4AndFp6GroupsLandInTheirSmemSlots) {
  for (const DataType t : {DataType::U4x16Align16B, DataType::U6x16Align16B, DataType::U4x16Align8B}) {
    TmaBench b;
    const TmaPacking pk = *tma_packing(t);
    const std::uint32_t row_gmem = 3 * pk.group_gmem, pitch = 48;
    const GmemAddr a = b.alloc_filled(2 * pitch, [](std::uint64_t i) { return static_cast<std::uint8_t>(i + 1); });
    const TensorMap map = TensorMap::tiled({.dtype = t, .address = a, .dims = {48, 2}, .strides = {pitch},
                                            .box = {64, 2}, .swizzle = Swizzle::None});
    ASSERT_EQ(map.box_bytes(), 2 * 4 * pk.group_smem) << name_of(t);
    ASSERT_EQ(map.gmem_bytes(48), row_gmem);
    const auto smem = load_box(b, map, {0, 0});
    for (std::uint32_t r = 0; r < 2; ++r)
      for (std::uint32_t g = 0; g < 4; ++g)
        for (std::uint32_t i = 0; i < pk.group_smem; ++i) {
          const bool data = g < 3 && i < pk.group_gmem;
          ASSERT_EQ(smem[(r * 4 + g) * pk.group_smem + i], data ? r * pitch + g * pk.group_gmem + i + 1 : 0)
              << name_of(t) << " row " << r << " group " << g << " byte " << i;
        }
  }
}

// A TMA store of a packed type writes each group's GMEM bytes back from the start of its SMEM slot
// (the padding is dropped) and clips at the tensor's end: a load then a store copies the tensor.
TEST(TmaStoreTest, PackedGroupsStoreBackWithoutTheirPadding) {
  for (const DataType t : {DataType::U4x16Align16B, DataType::U6x16Align16B}) {
    TmaBench b;
    const std::uint32_t pitch = 48;
    const GmemAddr a = b.alloc_filled(2 * pitch, [](std::uint64_t i) { return static_cast<std::uint8_t>(i + 1); });
    const GmemAddr c = b.alloc_filled(2 * pitch, [](std::uint64_t) { return std::uint8_t{0xEE}; });
    auto spec = [&](GmemAddr at) {
      return TensorMapSpec{.dtype = t, .address = at, .dims = {48, 2}, .strides = {pitch}, .box = {64, 2}};
    };
    const TensorMap in = TensorMap::tiled(spec(a)), out = TensorMap::tiled(spec(c));
    b.run([&](Warp& w) -> Task {
      w.mbarrier_init(kBar, 1);
      w.mbarrier_arrive_expect_tx(kBar, in.box_bytes());
      w.tma_load(in, kDst, kBar, {0, 0});
      co_await w.mbarrier_wait(kBar, 0);
      w.tma_store(out, kDst, {0, 0});
      w.bulk_commit_group();
      co_await w.bulk_wait_group(0);
    });
    const std::uint32_t row = static_cast<std::uint32_t>(in.gmem_bytes(48));
    const auto src = b.sim.gmem().bytes(a, 2 * pitch), dst = b.sim.gmem().bytes(c, 2 * pitch);
    for (std::uint32_t i = 0; i < 2 * pitch; ++i)
      ASSERT_EQ(dst[i], i % pitch < row ? src[i] : std::byte{0xEE}) << name_of(t) << " byte " << i;
  }
}

TEST(TmaMisuseTest, PackedTensorsMoveWholeGroupsOf16) {
  TmaBench b;
  const GmemAddr a = b.sim.gmem().alloc(1024);
  EXPECT_THROW(TensorMap::tiled({.dtype = DataType::U4x16Align16B, .address = a, .dims = {40, 2}, .strides = {32},
                                 .box = {32, 2}}),
               InputError);  // 40 elements: not whole groups
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U4x16Align16B, .address = a, .dims = {64, 2},
                                          .strides = {32}, .box = {32, 2}});
  const MisuseError e = test::expect_misuse([&] {
    b.run([&](Warp& w) -> Task {
      w.mbarrier_init(kBar, 1);
      w.tma_load(map, kDst, kBar, {8, 0});
      co_return;
    });
  }, Rule::TmaInvalid);
  EXPECT_NE(std::string(e.what()).find("coordinate 8 of a 16u4_align16b tensor is not a multiple of 16"),
            std::string::npos)
      << e.what();
}

TEST(TmaLoadTest, RankThreeBoxLandsInRowMajorOrder) {
  TmaBench b;
  const GmemAddr a = b.alloc_filled(16 * 4 * 3, [](std::uint64_t i) { return static_cast<std::uint8_t>(i); });
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = a, .dims = {16, 4, 3},
                                          .strides = {16, 64}, .box = {16, 2, 2}, .elem_strides = {},
                                          .swizzle = Swizzle::None, .oob_fill = OobFill::Zero});
  const auto smem = load_box(b, map, {0, 1, 1});
  EXPECT_EQ(smem[0], 64 + 16);            // (z1, y1)
  EXPECT_EQ(smem[16], 64 + 32);           // (z1, y2)
  EXPECT_EQ(smem[32], 128 + 16);          // (z2, y1)
  EXPECT_EQ(smem[63], 128 + 32 + 15);     // (z2, y2, x15)
}

TEST(TmaStoreTest, StoresClipAtTheTensorBoundsAndCountOnlyWrittenBytes) {
  TmaBench b;
  const GmemAddr out = b.alloc_filled(10 * 160, [](std::uint64_t) -> std::uint8_t { return 0xee; });
  const TensorMap map = TensorMap::tiled({.dtype = DataType::F32, .address = out, .dims = {40, 10}, .strides = {160},
                                          .box = {16, 16}, .elem_strides = {}, .swizzle = Swizzle::None,
                                          .oob_fill = OobFill::Zero});
  const RunResult r = b.run([&](Warp& w) -> Task {
    std::vector<std::byte> tile(map.box_bytes(), std::byte{0x11});
    w.st_shared(kDst, tile);
    w.fence_proxy_async();
    w.tma_store(map, kDst, {32, 8});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
  });
  EXPECT_EQ(r.tma.store_bytes, 8u * 2 * 4);  // 8 columns x 2 rows inside
  auto g = b.sim.gmem().bytes(out, 10 * 160);
  for (std::uint32_t row = 0; row < 10; ++row)
    for (std::uint32_t byte = 0; byte < 160; ++byte) {
      const bool written = row >= 8 && byte >= 128;
      ASSERT_EQ(g[row * 160 + byte], std::byte(written ? 0x11 : 0xee)) << row << "," << byte;
    }
}

TEST(TmaTimingTest, ALoadCompletesAtTheCycleDerivedFromTheConfig) {
  TmaBench b;
  const TensorMap map = chunk_tensor(b, 32, 128, Swizzle::B128);  // 4096-byte box
  Cycle resumed = 0;
  const RunResult r = b.run([&](Warp& w) -> Task {
    w.mbarrier_init(kBar, 1);                             // cycle 0 (issue 1)
    w.mbarrier_arrive_expect_tx(kBar, map.box_bytes());  // cycle 1, lands at 6
    w.tma_load(map, kDst, kBar, {0, 0});                  // cycle 2; reaches the unit at 2 + 2 = 4
    co_await w.mbarrier_wait(kBar, 0);
    resumed = w.now();
  });
  // 4 + 4096 B / 64 B per cycle (64) + load latency 100 = 168: complete_tx flips the phase;
  // the waiter resumes after the wakeup latency: 168 + 10.
  EXPECT_EQ(resumed, 178u);
  EXPECT_EQ(r.cycles, 178u);
  EXPECT_EQ(r.tma.busy_cycles, 64u);
  EXPECT_EQ(r.tma.load_bytes, 4096u);
}

TEST(TmaTimingTest, BackToBackLoadsQueueBehindEachOtherInTheUnit) {
  TmaBench b;
  const TensorMap map = chunk_tensor(b, 32, 128, Swizzle::B128);
  Cycle resumed = 0;
  b.run([&](Warp& w) -> Task {
    w.mbarrier_init(kBar, 1);
    w.mbarrier_arrive_expect_tx(kBar, 2 * map.box_bytes());
    w.tma_load(map, kDst, kBar, {0, 0});                 // unit: 4 .. 68
    w.tma_load(map, kDst + 4096, kBar, {0, 0});          // issued at 4, reaches 6, streams 68 .. 132
    co_await w.mbarrier_wait(kBar, 0);
    resumed = w.now();
  });
  EXPECT_EQ(resumed, 132u + 100 + 10);
}

TEST(TmaTimingTest, WaitGroupReadReturnsWhenTheStoreHasReadSmemAndWaitGroupWhenWritten) {
  TmaBench b;
  const TensorMap map = chunk_tensor(b, 32, 128, Swizzle::B128);
  Cycle read = 0, written = 0;
  b.run([&](Warp& w) -> Task {
    w.tma_store(map, kDst, {0, 0});  // cycle 0, reaches the unit at 2, reads SMEM 2 .. 66
    w.bulk_commit_group();           // cycle 2
    co_await w.bulk_wait_group_read(0);
    read = w.now();
    co_await w.bulk_wait_group(0);
    written = w.now();
  });
  // Both count store latency 50 from the end of the read (the L2 took the bytes at once): the
  // H100 measures the same time for wait_group.read and wait_group.
  EXPECT_EQ(read, 66u + 50);
  EXPECT_EQ(written, 66u + 50);
}

TEST(TmaTimingTest, WaitGroupAllowsTheNewestGroupsToStayPending) {
  TmaBench b;
  const TensorMap map = chunk_tensor(b, 32, 128, Swizzle::B128);
  Cycle t = 0;
  b.run([&](Warp& w) -> Task {
    w.tma_store(map, kDst, {0, 0});  // reads 2 .. 66, written 116
    w.bulk_commit_group();
    w.tma_store(map, kDst, {0, 0});  // issued 3, reads 66 .. 130, written 180
    w.bulk_commit_group();
    co_await w.bulk_wait_group(1);   // only the first group must be complete
    t = w.now();
    co_await w.bulk_wait_group(0);   // and the second before the warp exits (its SMEM is read until 130)
  });
  EXPECT_EQ(t, 116u);
}

// ---------------------------------------------------------------------------- misuse

TEST(TmaMisuseTest, TensorMapValidationNamesTheField) {
  const GmemAddr a{0x10000};
  auto spec = [&] {
    return TensorMapSpec{.dtype = DataType::BF16, .address = a, .dims = {1024, 1024}, .strides = {2048},
                         .box = {64, 64}, .elem_strides = {}, .swizzle = Swizzle::B128, .oob_fill = OobFill::Zero};
  };
  auto expect_bad = [](const TensorMapSpec& s, const char* text) {
    try {
      TensorMap::tiled(s);
      FAIL() << "expected InputError: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  EXPECT_NO_THROW(TensorMap::tiled(spec()));
  auto s = spec();
  s.box = {64, 300};
  expect_bad(s, "box dimension 1 is 300, must be in 1..256");
  s = spec();
  s.strides = {2056};
  expect_bad(s, "not a multiple of 16");
  s = spec();
  s.strides = {1024};
  expect_bad(s, "smaller than dimension 0's extent");
  s = spec();
  s.box = {128, 64};
  expect_bad(s, "exceeds the 128B swizzle span");
  s = spec();
  s.address = GmemAddr{0x10008};
  expect_bad(s, "not 16-byte aligned");
  s = spec();
  s.box = {4, 64};
  s.swizzle = Swizzle::None;
  expect_bad(s, "multiple of 16");
  s = spec();
  s.elem_strides = {1, 9};
  expect_bad(s, "element stride 1 is 9");
  s = spec();
  s.dims = {1, 1, 1, 1, 1, 1};
  expect_bad(s, "rank 6");
  s = spec();
  s.dtype = DataType::U16;
  s.oob_fill = OobFill::NanRequestZeroFma;
  expect_bad(s, "floating-point");
}

void expect_tma_misuse(TmaBench& b, const WarpProgram& p, Rule rule, const char* op, Cycle cycle) {
  try {
    b.run(p);
    FAIL() << "expected " << rule_name(rule);
  } catch (const MisuseError& e) {
    EXPECT_EQ(e.rule(), rule) << e.what();
    EXPECT_NE(e.where().op.find(op), std::string::npos) << e.what();
    EXPECT_EQ(e.where().cycle, cycle) << e.what();
  }
}

TEST(TmaMisuseTest, MisalignedSmemDestinationForTheSwizzle) {
  TmaBench b;
  const TensorMap map = chunk_tensor(b, 8, 128, Swizzle::B128);
  expect_tma_misuse(
      b,
      [&](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.tma_load(map, SmemAddr{1536}, kBar, {0, 0});  // 512-aligned, needs 1024
        co_return;
      },
      Rule::SmemMisaligned, "tma.load", 0);
}

TEST(TmaMisuseTest, BoxLandingPastTheEndOfSmem) {
  TmaBench b;
  const TensorMap map = chunk_tensor(b, 8, 128, Swizzle::B128);
  expect_tma_misuse(
      b,
      [&](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.tma_load(map, SmemAddr{32768 - 512 - 512}, kBar, {0, 0});  // 1024 bytes from 31744: fits
        w.tma_load(map, SmemAddr{32768 - 512}, kBar, {0, 0});
        co_return;
      },
      Rule::SmemOutOfBounds, "tma.load", 0);
}

TEST(TmaMisuseTest, LoadOverALiveBarrierIsClobberingWhenTheDataLands) {
  TmaBench b;
  const TensorMap map = chunk_tensor(b, 8, 128, Swizzle::B128);
  expect_tma_misuse(
      b,
      [&](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.mbarrier_init(MBarrierRef{1024 + 512}, 1);
        w.mbarrier_arrive_expect_tx(kBar, 1024);
        w.tma_load(map, kDst, kBar, {0, 0});  // issued at 3: unit 5 .. 21, lands at 121
        co_await w.mbarrier_wait(kBar, 0);
      },
      Rule::BarrierClobbered, "tma.load", 121);
}

TEST(TmaMisuseTest, TensorMapOverUnallocatedMemory) {
  TmaBench b;
  const TensorMap map = TensorMap::tiled({.dtype = DataType::U8, .address = GmemAddr{0x1000}, .dims = {128, 8},
                                          .strides = {128}, .box = {128, 8}, .elem_strides = {},
                                          .swizzle = Swizzle::None, .oob_fill = OobFill::Zero});
  expect_tma_misuse(
      b,
      [&](Warp& w) -> Task {
        w.mbarrier_init(kBar, 1);
        w.tma_load(map, kDst, kBar, {0, 0});
        co_return;
      },
      Rule::TmaInvalid, "tma.load", 0);
}

}  // namespace
}  // namespace bwsim
