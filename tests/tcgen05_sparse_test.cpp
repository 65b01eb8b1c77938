// tcgen05.mma.sp on unit_test.yaml: the metadata codes and their TMEM places against hand tables,
// one exact product per kind with hand-chosen metadata loaded by tcgen05.cp (as CUTLASS does),
// the descriptor's sparse fields and their errors, an undefined code, and the SMEM bound of the
// doubled B.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/tensor/sm100/SparseMetadata.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {
namespace {

using test::expect_misuse;
using test::run_cta;

constexpr SmemAddr kSlot{0};
constexpr MBarrierRef kBar{8};
constexpr SmemAddr kA{1024}, kB{8192}, kMeta{12288};
constexpr std::uint32_t kN = 16;        // columns of D
constexpr std::uint32_t kMetaCol = 64;  // the metadata's TMEM columns (4, from tcgen05.cp 128x128b)

// ------------------------------------------------------------------ metadata codes and places

TEST(SparseMetadataTest, CodesPlaceTheStoredElementsAsPtxSays) {
  std::uint32_t pos[4];
  ASSERT_TRUE(sparse_positions(MmaKind::F16, 0b1101, pos));  // indices 1 (bits 1-0) and 3 (bits 3-2)
  EXPECT_EQ(pos[0], 1u);
  EXPECT_EQ(pos[1], 3u);
  ASSERT_TRUE(sparse_positions(MmaKind::TF32, 0b1110, pos));
  EXPECT_EQ(pos[0], 1u);
  ASSERT_TRUE(sparse_positions(MmaKind::TF32, 0b0100, pos));
  EXPECT_EQ(pos[0], 0u);
  ASSERT_TRUE(sparse_positions(MmaKind::MXF4, 0b1000, pos));  // pairs 0 and 2 of the 8-element chunk
  EXPECT_EQ((std::array{pos[0], pos[1], pos[2], pos[3]}), (std::array{0u, 1u, 4u, 5u}));
  EXPECT_FALSE(sparse_positions(MmaKind::TF32, 0b1000, pos));
  EXPECT_FALSE(sparse_positions(MmaKind::I8, 0b0101, pos));  // two equal indices
  EXPECT_FALSE(sparse_positions(MmaKind::F16, 0b0000, pos));
}

// CUTLASS tmem_e_frg / JAX format_tcgen05_sparse_metadata, worked by hand.
TEST(SparseMetadataTest, CodesLieWhereCutlassPutsThem) {
  auto at = [](MmaKind kind, std::uint32_t row, std::uint32_t chunk) {
    const MetadataNibble n = sparse_metadata_nibble(kind, row, chunk);
    return std::array{n.cell.lane, n.cell.column, n.bit};
  };
  // f16: lanes 0-7 of a 16-lane group hold K 0-15 of rows 0-7 (bits 0-15) and 8-15 (bits 16-31);
  // lanes 8-15 the same rows' K 16-31.
  EXPECT_EQ(at(MmaKind::F16, 0, 0), (std::array{0u, 0u, 0u}));
  EXPECT_EQ(at(MmaKind::F16, 9, 1), (std::array{1u, 0u, 20u}));
  EXPECT_EQ(at(MmaKind::F16, 9, 5), (std::array{9u, 0u, 20u}));
  EXPECT_EQ(at(MmaKind::F16, 17, 3), (std::array{17u, 0u, 12u}));
  EXPECT_EQ(at(MmaKind::TF32, 127, 7), (std::array{127u, 0u, 28u}));
  // 8-bit and FP4 kinds: lane = row, 16 codes over two columns.
  EXPECT_EQ(at(MmaKind::I8, 5, 9), (std::array{5u, 1u, 4u}));
  EXPECT_EQ(at(MmaKind::F8F6F4, 100, 7), (std::array{100u, 0u, 28u}));
  EXPECT_EQ(sparse_metadata_columns(MmaKind::F16), 1u);
  EXPECT_EQ(sparse_metadata_columns(MmaKind::I8), 2u);
}

// ------------------------------------------------------------------ instruction descriptor

TEST(SparseDescriptorTest, SparseBitAndSelectorRoundTripAndTheirErrors) {
  const InstrDescriptorFields f{.sparse = true, .sparse_selector = 1, .n = 64};
  const InstrDescriptor d = encode(MmaKind::F16, f);
  EXPECT_EQ(d.raw & 7u, 0b101u);  // selector 1 (bits 0-1), sparse (bit 2)
  InstrDescriptorFields back;
  ASSERT_FALSE(decode(MmaKind::F16, d, back));
  EXPECT_TRUE(back.sparse);
  EXPECT_EQ(back.sparse_selector, 1u);
  auto error = [](MmaKind kind, std::uint32_t raw) {
    InstrDescriptorFields out;
    const auto e = decode(kind, InstrDescriptor{raw}, out);
    return e ? *e : std::string("(accepted)");
  };
  const std::uint32_t i8 =
      encode(MmaKind::I8, {.a_type = DataType::S8, .b_type = DataType::S8, .d_type = DataType::S32, .sparse = true,
                           .n = 64})
          .raw;
  EXPECT_EQ(error(MmaKind::I8, i8), "(accepted)");
  EXPECT_NE(error(MmaKind::I8, i8 | 1u).find("must be 0 for kind::i8"), std::string::npos);
  EXPECT_NE(error(MmaKind::F16, d.raw | 2u).find("sparsity selector 3"), std::string::npos);
  const std::uint32_t mx8 =
      encode(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 16}).raw;
  EXPECT_NE(error(MmaKind::MXF8F6F4, mx8 | 1u << 2).find("sparse block-scaled MMA"), std::string::npos);
}

// ------------------------------------------------------------------ exact products

// K-major, no swizzle: 16-byte core-matrix rows, the next 16 bytes of K LBO = 128 on, 8-row groups
// SBO apart (A: 32 bytes of stored K per row, SBO 256; B: 64 bytes of logical K, SBO 512).
constexpr SmemDescriptorFields kALayout{.start_address = 0, .leading_byte_offset = 128, .stride_byte_offset = 256};
constexpr SmemDescriptorFields kBLayout{.start_address = 0, .leading_byte_offset = 128, .stride_byte_offset = 512};
constexpr SmemDescriptorFields kMetaLayout{.start_address = 0, .leading_byte_offset = 128, .stride_byte_offset = 128};

void put(std::vector<std::byte>& img, const SmemDescriptorFields& f, MmaKind kind, DataType t, std::uint32_t r,
         std::uint32_t k, double v) {
  const OperandBits at = operand_bits(f, Major::K, kind, t, r, k);
  std::uint32_t code = 0;
  if (t == DataType::S8) {
    code = static_cast<std::uint32_t>(static_cast<std::int32_t>(v)) & 0xFF;
  } else if (t == DataType::TF32) {
    code = std::bit_cast<std::uint32_t>(static_cast<float>(v)) | 0x1FFFu;  // the low 13 bits are not read
  } else {
    std::byte buf[4] = {};
    store_from_float(t, static_cast<float>(v), buf);
    std::memcpy(&code, buf, size_of(t));
  }
  std::memcpy(&img[at.byte], &code, size_of(t));
}

constexpr double kValues[8] = {0.5, 1, 1.5, 2, -1, 3, -0.5, 4};
double value(DataType t, std::uint32_t r, std::uint32_t k, std::uint32_t salt) {
  if (t == DataType::S8) return static_cast<double>((r * 37 + k * 11 + salt) % 256) - 128;
  return kValues[(r * 3 + k * 5 + salt) % 8];
}

// A valid code for chunk g of row m, varied over rows and chunks.
std::uint32_t code_for(MmaKind kind, std::uint32_t m, std::uint32_t g) {
  static constexpr std::uint32_t kPairs[6] = {0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110};
  if (kind == MmaKind::TF32) return (m + g) % 2 ? 0b1110 : 0b0100;
  return kPairs[(m + 3 * g) % 6];
}

struct SparseCase {
  const char* name;
  MmaKind kind;
  DataType t;
  std::uint32_t selector;
};

// One M = 128, N = kN sparse MMA with its metadata copied into TMEM by tcgen05.cp 128x128b; the
// metadata columns the instruction must not read hold 0xF codes (undefined: reading one fails).
// Returns D rows 0..31 and the reference.
std::pair<std::vector<std::uint32_t>, std::vector<double>> run_sparse(const SparseCase& c, std::uint32_t bad_row = ~0u,
                                                                      std::uint32_t bad_chunk = 0) {
  const std::uint32_t Kd = mma_k(c.kind), K = 2 * Kd;
  const SparseChunk chunk = sparse_chunk(c.kind);
  std::vector<std::byte> a(4096), b(2048), meta(2048);
  std::vector<std::uint32_t> words(128 * 4, 0xFFFFFFFFu);
  for (std::uint32_t r = 0; r < 128; ++r)
    for (std::uint32_t col = c.selector; col < c.selector + sparse_metadata_columns(c.kind); ++col)
      words[r * 4 + col] = 0;
  std::vector<double> logical(128 * K, 0.0);
  for (std::uint32_t m = 0; m < 128; ++m)
    for (std::uint32_t g = 0; g < K / chunk.elements; ++g) {
      const std::uint32_t code = m == bad_row && g == bad_chunk ? 0b0101 : code_for(c.kind, m, g);
      const MetadataNibble at = sparse_metadata_nibble(c.kind, m, g);
      words[at.cell.lane * 4 + c.selector + at.cell.column] |= code << at.bit;
      std::uint32_t pos[4];
      const bool defined = sparse_positions(c.kind, code, pos);
      for (std::uint32_t j = 0; j < chunk.stored; ++j) {
        const double v = value(c.t, m, g * chunk.stored + j, 0);
        put(a, kALayout, c.kind, c.t, m, g * chunk.stored + j, v);
        if (defined) logical[m * K + g * chunk.elements + pos[j]] = v;
      }
    }
  for (std::uint32_t r = 0; r < 128; ++r)
    for (std::uint32_t j = 0; j < 4; ++j)
      std::memcpy(&meta[operand_address(kMetaLayout, Major::K, 4, r, j)], &words[r * 4 + j], 4);
  for (std::uint32_t n = 0; n < kN; ++n)
    for (std::uint32_t k = 0; k < K; ++k) put(b, kBLayout, c.kind, c.t, n, k, value(c.t, n, k, 1));
  const bool integer = c.kind == MmaKind::I8;
  const InstrDescriptor idesc = encode(c.kind, {.a_type = c.t,
                                                .b_type = c.t,
                                                .d_type = integer ? DataType::S32 : DataType::F32,
                                                .sparse = true,
                                                .sparse_selector = c.selector,
                                                .m = 128,
                                                .n = kN});
  std::vector<std::uint32_t> d(32 * kN);
  run_cta(
      [&](Warp& w) -> Task {
        w.st_shared(kA, a);
        w.st_shared(kB, b);
        w.st_shared(kMeta, meta);
        w.fence_proxy_async();
        const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 128);
        w.mbarrier_init(kBar, 1);
        auto desc = [](SmemAddr at, SmemDescriptorFields f) {
          f.start_address = at.offset;
          return encode(f);
        };
        w.tcgen05_cp(t + kMetaCol, desc(kMeta, kMetaLayout), TmemCopyShape::S128x128b);
        w.tcgen05_mma_sp(c.kind, t, desc(kA, kALayout), desc(kB, kBLayout), t + kMetaCol, idesc, false);
        w.tcgen05_commit(kBar);
        co_await w.mbarrier_wait(kBar, 0);
        w.tcgen05_ld(t, TmemShape::S32x32b, kN, d);
        co_await w.tcgen05_wait_ld();
        w.tcgen05_dealloc(t, 128);
      },
      32, 16384);
  std::vector<double> want;
  for (std::uint32_t m = 0; m < 32; ++m)
    for (std::uint32_t n = 0; n < kN; ++n) {
      double sum = 0;
      for (std::uint32_t k = 0; k < K; ++k) sum += logical[m * K + k] * value(c.t, n, k, 1);
      want.push_back(sum);
    }
  return {d, want};
}

class SparseProductTest : public testing::TestWithParam<SparseCase> {};

TEST_P(SparseProductTest, DIsTheProductOfTheExpandedA) {
  const SparseCase& c = GetParam();
  const auto [d, want] = run_sparse(c);
  for (std::uint32_t i = 0; i < 32 * kN; ++i) {
    const double got = c.kind == MmaKind::I8 ? static_cast<double>(static_cast<std::int32_t>(d[i]))
                                             : static_cast<double>(std::bit_cast<float>(d[i]));
    ASSERT_EQ(got, want[i]) << c.name << " m " << i / kN << " n " << i % kN;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDenseKind, SparseProductTest,
                         testing::Values(SparseCase{"F16Selector0", MmaKind::F16, DataType::F16, 0},
                                         SparseCase{"Bf16Selector1", MmaKind::F16, DataType::BF16, 1},
                                         SparseCase{"Tf32Selector1", MmaKind::TF32, DataType::TF32, 1},
                                         SparseCase{"E4m3", MmaKind::F8F6F4, DataType::E4M3, 0},
                                         SparseCase{"S8", MmaKind::I8, DataType::S8, 0}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SparseMisuseTest, AnUndefinedMetadataCodeIsALocatedError) {
  const MisuseError e =
      expect_misuse([] { run_sparse({"F16", MmaKind::F16, DataType::F16, 0}, 3, 2); }, Rule::MmaInvalid);
  EXPECT_NE(std::string(e.what()).find("sparsity metadata code 0b0101 of row 3, chunk 2"), std::string::npos)
      << e.what();
}

void expect_sparse_misuse(bool sp, InstrDescriptorFields f, TmemAddr meta, const std::string& message,
                          Rule rule = Rule::MmaInvalid) {
  const MisuseError e = expect_misuse(
      [&] {
        run_cta(
            [&](Warp& w) -> Task {
              const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 512);
              const SmemDescriptor op = encode(
                  SmemDescriptorFields{.start_address = 1024, .leading_byte_offset = 128, .stride_byte_offset = 512});
              if (sp) w.tcgen05_mma_sp(MmaKind::F16, t, op, op, meta, encode(MmaKind::F16, f), false);
              else w.tcgen05_mma(MmaKind::F16, t, op, op, encode(MmaKind::F16, f), false);
            },
            32, 32768);
      },
      rule);
  EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
}

TEST(SparseMisuseTest, TheFormTheShapeAndTheMetadataAddressAreChecked) {
  expect_sparse_misuse(false, {.sparse = true, .n = 64}, TmemAddr{}, "sparse bit (2) is set on a dense tcgen05.mma");
  expect_sparse_misuse(true, {.n = 64}, TmemAddr{256}, "sparse bit (2) is clear on tcgen05.mma.sp");
  expect_sparse_misuse(true, {.sparse = true, .m = 64, .n = 64}, TmemAddr{256},
                       "sparse M = 64 on cta_group::1 (half the datapath) is not modeled");
  expect_sparse_misuse(true, {.sparse = true, .n = 64}, TmemAddr::at(32, 256), "metadata address");
  expect_sparse_misuse(true, {.sparse = true, .sparse_selector = 1, .n = 64}, TmemAddr{511}, "",
                       Rule::TmemOutOfAllocation);
}

// B spans 64 bytes of K: in the 32-byte swizzle its second half's place is not modeled.
TEST(SparseMisuseTest, SparseBInThe32ByteSwizzleIsNotModeled) {
  const MisuseError e = expect_misuse(
      [] {
        run_cta(
            [](Warp& w) -> Task {
              const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 512);
              const SmemDescriptor a = encode(
                  SmemDescriptorFields{.start_address = 1024, .leading_byte_offset = 128, .stride_byte_offset = 512});
              const SmemDescriptor b = encode(SmemDescriptorFields{.start_address = 8192,
                                                                   .leading_byte_offset = 16,
                                                                   .stride_byte_offset = 256,
                                                                   .layout = UmmaLayout::Swizzle32B});
              w.tcgen05_mma_sp(MmaKind::F16, t, a, b, t + 256, encode(MmaKind::F16, {.sparse = true, .n = 64}), false);
            },
            32, 32768);
      },
      Rule::MmaInvalid);
  EXPECT_NE(std::string(e.what()).find("32-byte swizzle layout is not modeled"), std::string::npos) << e.what();
}

// ------------------------------------------------------------------ timing

// The SMEM bound with B over the doubled K: f16 M = 128, N = 64 reads 128 x 32 + 64 x 64 = 8192
// bytes = 64 cycles at 128 B/cycle (dense: 48) > its math 2 x 128 x 64 x 16 / 8192 = 32, so the
// second MMA starts 64 after the first: 1 + 64 + 32 + 100 + 15.
TEST(SparseTimingTest, TheDoubledBSetsTheInterval) {
  Cycle elapsed = 0;
  run_cta(
      [&](Warp& w) -> Task {
        const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 512);
        w.mbarrier_init(kBar, 1);
        const SmemDescriptor op =
            encode(SmemDescriptorFields{.start_address = 1024, .leading_byte_offset = 128, .stride_byte_offset = 512});
        const auto idesc = encode(MmaKind::F16, {.sparse = true, .m = 128, .n = 64});
        const Cycle t = w.now();
        for (int i = 0; i < 2; ++i) w.tcgen05_mma_sp(MmaKind::F16, d, op, op, d + 256, idesc, i > 0);
        w.tcgen05_commit(kBar);
        co_await w.mbarrier_wait(kBar, 0);
        elapsed = w.now() - t;
        w.tcgen05_dealloc(d, 512);
      },
      32, 32768, Mode::Timing);
  EXPECT_EQ(elapsed, 1u + 64u + 32u + 100u + 15u);
}

}  // namespace
}  // namespace bwsim
