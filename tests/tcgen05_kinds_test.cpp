// Every tcgen05.mma kind on unit_test.yaml: both instruction-descriptor layouts against hand
// tables, one exact product per kind and element type (FP6/FP4 laid out as PTX packs them, block
// scales that change the result, integer wrap and saturation), the errors for fields and operands
// a kind does not take, and the SMEM operand bound of packed FP4 (one MMA of each kind is timed
// with the others in tcgen05_test.cpp's MmaTimingTest).
#include <gtest/gtest.h>

#include <bit>
#include <climits>
#include <cstring>

#include "TestSupport.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {
namespace {

using test::expect_misuse;
using test::run_cta;

constexpr SmemAddr kSlot{0};
constexpr MBarrierRef kBar{8};
constexpr SmemAddr kA{1024}, kB{8192}, kSfa{12288}, kSfb{12800};
constexpr std::uint32_t kN = 16;                     // columns of D in the product tests
constexpr std::uint32_t kSfaCol = 64, kSfbCol = 96;  // scale factors' TMEM columns

// ------------------------------------------------------------------ instruction descriptors

TEST(InstrDescriptorKindsTest, DenseLayoutBitsForTf32I8AndSubByteF8f6f4) {
  EXPECT_EQ(encode(MmaKind::TF32, {.a_type = DataType::TF32, .b_type = DataType::TF32, .m = 128, .n = 64}).raw,
            (1u << 4) | (2u << 7) | (2u << 10) | (8u << 17) | (8u << 24));
  EXPECT_EQ(encode(MmaKind::I8, {.a_type = DataType::S8,
                                 .b_type = DataType::U8,
                                 .d_type = DataType::S32,
                                 .saturate = true,
                                 .m = 128,
                                 .n = 32})
                .raw,
            (1u << 3) | (2u << 4) | (1u << 7) | (0u << 10) | (4u << 17) | (8u << 24));
  EXPECT_EQ(encode(MmaKind::F8F6F4, {.a_type = DataType::E2M3, .b_type = DataType::E2M1, .m = 64, .n = 8}).raw,
            (1u << 4) | (3u << 7) | (5u << 10) | (1u << 17) | (4u << 24));
  EXPECT_EQ(encode(MmaKind::F8F6F4, {.a_type = DataType::E3M2, .b_type = DataType::E3M2, .m = 128, .n = 16}).raw,
            (1u << 4) | (4u << 7) | (4u << 10) | (2u << 17) | (8u << 24));
  InstrDescriptorFields f;
  ASSERT_FALSE(decode(MmaKind::I8, InstrDescriptor{(1u << 3) | (2u << 4) | (1u << 7) | (4u << 17) | (8u << 24)}, f));
  EXPECT_EQ(f.a_type, DataType::S8);
  EXPECT_EQ(f.b_type, DataType::U8);
  EXPECT_EQ(f.d_type, DataType::S32);
  EXPECT_TRUE(f.saturate);
}

TEST(InstrDescriptorKindsTest, BlockScaledLayoutBitsForEachKind) {
  // mxf8f6f4 e3m2 x e4m3, M 128 N 256, ue8m0, A ID 3, B ID 1.
  const InstrDescriptor mx8 =
      encode(MmaKind::MXF8F6F4,
             {.a_type = DataType::E3M2, .b_type = DataType::E4M3, .m = 128, .n = 256, .a_sf_id = 3, .b_sf_id = 1});
  EXPECT_EQ(mx8.raw, (1u << 4) | (4u << 7) | (0u << 10) | (32u << 17) | (1u << 23) | (1u << 27) | (3u << 29));
  // mxf4nvf4 e2m1, ue4m3 (bit 23 clear), M 256 N 128, negate A, B ID 2.
  const InstrDescriptor nv = encode(MmaKind::MXF4NVF4, {.a_type = DataType::E2M1,
                                                        .b_type = DataType::E2M1,
                                                        .negate_a = true,
                                                        .m = 256,
                                                        .n = 128,
                                                        .scale_type = DataType::UE4M3,
                                                        .b_sf_id = 2});
  EXPECT_EQ(nv.raw, (2u << 4) | (1u << 7) | (1u << 10) | (1u << 13) | (16u << 17) | (2u << 27));
  EXPECT_EQ(encode(MmaKind::MXF4, {.a_type = DataType::E2M1, .b_type = DataType::E2M1, .m = 128, .n = 8}).raw,
            (1u << 7) | (1u << 10) | (1u << 17) | (1u << 23) | (1u << 27));
  InstrDescriptorFields f;
  ASSERT_FALSE(decode(MmaKind::MXF8F6F4, mx8, f));
  EXPECT_EQ(f.a_type, DataType::E3M2);
  EXPECT_EQ(f.m, 128u);
  EXPECT_EQ(f.n, 256u);
  EXPECT_EQ(f.a_sf_id, 3u);
  EXPECT_EQ(f.b_sf_id, 1u);
  EXPECT_EQ(f.scale_type, DataType::UE8M0);
  ASSERT_FALSE(decode(MmaKind::MXF4NVF4, nv, f));
  EXPECT_EQ(f.scale_type, DataType::UE4M3);
  EXPECT_EQ(f.m, 256u);
  EXPECT_TRUE(f.negate_a);
}

// Each rejected field is named in the error.
TEST(InstrDescriptorKindsTest, DecodeNamesTheFieldAKindDoesNotTake) {
  auto error = [](MmaKind kind, std::uint32_t raw) {
    InstrDescriptorFields f;
    const auto e = decode(kind, InstrDescriptor{raw}, f);
    return e ? *e : std::string("(accepted)");
  };
  const std::uint32_t i8 =
      encode(MmaKind::I8, {.a_type = DataType::S8, .b_type = DataType::S8, .d_type = DataType::S32, .m = 128, .n = 16})
          .raw;
  const std::uint32_t e2m1 = encode(MmaKind::F8F6F4, {.a_type = DataType::E2M1, .b_type = DataType::E2M1, .n = 16}).raw;
  const std::uint32_t mx8 =
      encode(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 16}).raw;
  const std::uint32_t mx4 = encode(MmaKind::MXF4, {.a_type = DataType::E2M1, .b_type = DataType::E2M1, .n = 16}).raw;
  EXPECT_NE(error(MmaKind::I8, i8 | 1u << 13).find("negate (bits 13/14)"), std::string::npos);
  EXPECT_NE(error(MmaKind::I8, (i8 & ~(3u << 4)) | 1u << 4).find("D format 1"), std::string::npos);
  EXPECT_NE(error(MmaKind::F8F6F4, e2m1 | 1u << 16).find("transpose (bits 15/16)"), std::string::npos);
  EXPECT_NE(error(MmaKind::F16, encode(MmaKind::F16, {}).raw | 1u << 3).find("saturate (bit 3)"), std::string::npos);
  EXPECT_NE(error(MmaKind::F16, encode(MmaKind::F16, {}).raw | 1u << 6).find("reserved bits"), std::string::npos);
  EXPECT_NE(error(MmaKind::F16, encode(MmaKind::F16, {}).raw | 1u << 30).find("maximum shift (bits 30-31)"),
            std::string::npos);
  EXPECT_NE(error(MmaKind::F8F6F4, (e2m1 & ~(7u << 7)) | 2u << 7).find("A format code 2"), std::string::npos);
  EXPECT_NE(error(MmaKind::MXF8F6F4, mx8 & ~(1u << 23)).find("scale type (bit 23) ue4m3"), std::string::npos);
  EXPECT_NE(error(MmaKind::MXF4, mx4 | 1u << 31).find("K = 96 (bit 31)"), std::string::npos);
  EXPECT_NE(error(MmaKind::MXF4, mx4 | 1u << 12).find("reserved bits"), std::string::npos);
  EXPECT_NE(error(MmaKind::MXF8F6F4, mx8 | 1u << 24).find("reserved bits"), std::string::npos);
  EXPECT_THROW(encode(MmaKind::I8, {.a_type = DataType::S8, .b_type = DataType::S8}), InputError);  // D f32
  EXPECT_THROW(encode(MmaKind::MXF4, {.a_type = DataType::E4M3, .b_type = DataType::E2M1}), InputError);
}

// ------------------------------------------------------------------ exact products

// A (128 rows) and B (kN rows) in SMEM, K-major without swizzle: 16-byte core-matrix rows, 8-row
// groups SBO = 256 apart, the second 16 bytes of K LBO = 128 on; element codes placed where
// operand_bits puts them (the layout under test is the MMA's own reading of the same function,
// so the hand check is in PackedLayoutIsThePtxOne below).
const SmemDescriptorFields kLayout{.start_address = 0, .leading_byte_offset = 128, .stride_byte_offset = 256};

void put_code(std::vector<std::byte>& img, MmaKind kind, DataType t, std::uint32_t r, std::uint32_t k,
              std::uint32_t code) {
  const OperandBits at = operand_bits(kLayout, Major::K, kind, t, r, k);
  const std::uint32_t bits = operand_element_bits(kind, t);
  if (bits >= 8) {
    std::memcpy(&img[at.byte], &code, bits / 8);
    return;
  }
  const std::uint32_t mask = ((1u << bits) - 1) << at.bit;
  std::uint32_t window = static_cast<std::uint32_t>(img[at.byte]) | static_cast<std::uint32_t>(img[at.byte + 1]) << 8;
  window = (window & ~mask) | (code << at.bit & mask);
  img[at.byte] = static_cast<std::byte>(window & 0xFF);
  img[at.byte + 1] = static_cast<std::byte>(window >> 8);
}

// The code of `v` in type t (exactly representable values only), and the value the MMA reads.
std::uint32_t code_of(DataType t, double v) {
  if (t == DataType::S8 || t == DataType::U8) return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)) & 0xFF;
  if (t == DataType::TF32) return std::bit_cast<std::uint32_t>(static_cast<float>(v)) | 0x1FFFu;  // low bits ignored
  std::byte buf[4] = {};
  store_from_float(t, static_cast<float>(v), buf);
  std::uint32_t code = 0;
  std::memcpy(&code, buf, size_of(t));
  return code;
}

// Small values every float format holds exactly (e2m1: 0, 0.5, 1, 1.5, 2, 3); products and K sums
// stay exact in fp32.
constexpr double kValues[8] = {0, 0.5, 1, 1.5, 2, -1, 3, -0.5};
double a_value(DataType t, std::uint32_t m, std::uint32_t k) {
  if (t == DataType::S8) return static_cast<double>((m * 37 + k * 11) % 256) - 128;
  if (t == DataType::U8) return static_cast<double>((m * 37 + k * 11) % 256);
  return kValues[(m * 3 + k * 5) % 8];
}
double b_value(DataType t, std::uint32_t n, std::uint32_t k) {
  if (t == DataType::S8) return static_cast<double>((n * 53 + k * 7) % 256) - 128;
  if (t == DataType::U8) return static_cast<double>((n * 53 + k * 7) % 256);
  return kValues[(n * 7 + k) % 8];
}

// Scale-factor bytes of row r, byte j (CUTLASS's 128x4 atom: 16 (r % 32) + 4 (r / 32) + j): a
// different factor per row and byte, 0.5 / 1 / 2 (ue8m0) or 0.75 / 1 / 1.5 (ue4m3).
std::uint8_t scale_code(DataType t, std::uint32_t r, std::uint32_t j, bool a) {
  const std::uint32_t i = (r + (a ? j : 2 * j)) % 3;
  if (t == DataType::UE8M0) return static_cast<std::uint8_t>(126 + i);
  const float v[3] = {0.75f, 1.0f, 1.5f};
  return float_to_e4m3(v[i]);
}

struct KindCase {
  const char* name;
  MmaKind kind;
  DataType a, b;
  ScaleVec vec = ScaleVec::X1;
  DataType scale = DataType::UE8M0;
  std::uint32_t sf_id = 0;
};

struct Product {
  std::vector<std::uint32_t> d;  // rows 0..31 x kN columns, as read by tcgen05.ld 32x32b
  std::vector<double> want;      // the double reference, same order
  double unscaled_differs = 0;   // how many elements the scales changed
};

// Runs one M = 128, N = kN MMA of `c` (D preloaded with `init` and accumulated onto when
// `accumulate`) and computes the reference.
Product run_product(const KindCase& c, bool accumulate = false, std::uint32_t init = 0, bool saturate = false) {
  const std::uint32_t K = mma_k(c.kind);
  const bool scaled = is_block_scaled(c.kind);
  std::vector<std::byte> a(4096), b(512), sfa(512, std::byte{0xFF}), sfb(512, std::byte{0xFF});
  for (std::uint32_t r = 0; r < 128; ++r)
    for (std::uint32_t k = 0; k < K; ++k) put_code(a, c.kind, c.a, r, k, code_of(c.a, a_value(c.a, r, k)));
  for (std::uint32_t n = 0; n < kN; ++n)
    for (std::uint32_t k = 0; k < K; ++k) put_code(b, c.kind, c.b, n, k, code_of(c.b, b_value(c.b, n, k)));
  // The factors the instruction reads: bytes sf_id .. sf_id + vec - 1; the others stay 0xFF
  // (NaN in ue8m0 and ue4m3), so reading a wrong byte shows.
  const std::uint32_t vec = static_cast<std::uint32_t>(c.vec);
  for (std::uint32_t r = 0; r < 128; ++r)
    for (std::uint32_t j = c.sf_id; j < c.sf_id + vec; ++j) {
      sfa[16 * (r % 32) + 4 * (r / 32) + j] = std::byte{scale_code(c.scale, r, j, true)};
      sfb[16 * (r % 32) + 4 * (r / 32) + j] = std::byte{scale_code(c.scale, r, j, false)};
    }
  const bool integer = c.kind == MmaKind::I8;
  InstrDescriptorFields f{.a_type = c.a,
                          .b_type = c.b,
                          .d_type = integer ? DataType::S32 : DataType::F32,
                          .saturate = saturate,
                          .m = 128,
                          .n = kN,
                          .scale_type = c.scale,
                          .a_sf_id = c.sf_id,
                          .b_sf_id = c.sf_id};
  Product p;
  p.d.resize(32 * kN);
  run_cta(
      [&](Warp& w) -> Task {
        w.st_shared(kA, a);
        w.st_shared(kB, b);
        w.st_shared(kSfa, sfa);
        w.st_shared(kSfb, sfb);
        w.fence_proxy_async();
        const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 128);
        std::vector<std::uint32_t> preload(32 * kN, init);
        w.tcgen05_st(t, TmemShape::S32x32b, kN, preload);
        co_await w.tcgen05_wait_st();
        w.mbarrier_init(kBar, 1);
        auto desc = [](SmemAddr at, std::uint32_t sbo) {
          return encode(
              SmemDescriptorFields{.start_address = at.offset, .leading_byte_offset = 128, .stride_byte_offset = sbo});
        };
        const InstrDescriptor idesc = encode(c.kind, f);
        if (scaled) {
          w.tcgen05_cp(t + kSfaCol, desc(kSfa, 128), TmemCopyShape::S32x128bWarpx4);
          w.tcgen05_cp(t + kSfbCol, desc(kSfb, 128), TmemCopyShape::S32x128bWarpx4);
          w.tcgen05_mma(c.kind, t, desc(kA, 256), desc(kB, 256), idesc, {t + kSfaCol, t + kSfbCol, c.vec}, accumulate);
        } else {
          w.tcgen05_mma(c.kind, t, desc(kA, 256), desc(kB, 256), idesc, accumulate);
        }
        w.tcgen05_commit(kBar);
        co_await w.mbarrier_wait(kBar, 0);
        w.tcgen05_ld(t, TmemShape::S32x32b, kN, p.d);
        co_await w.tcgen05_wait_ld();
        w.tcgen05_dealloc(t, 128);
      },
      32, 16384);
  auto factor = [&](DataType t, std::uint8_t code) {
    const auto v = static_cast<std::byte>(code);
    return static_cast<double>(load_as_float(t, &v));
  };
  for (std::uint32_t m = 0; m < 32; ++m)
    for (std::uint32_t n = 0; n < kN; ++n) {
      double sum = 0, plain = 0;
      for (std::uint32_t k = 0; k < K; ++k) {
        const double prod = a_value(c.a, m, k) * b_value(c.b, n, k);
        const std::uint32_t j = c.sf_id + k / (K / vec);
        sum += scaled ? prod * factor(c.scale, scale_code(c.scale, m, j, true)) *
                            factor(c.scale, scale_code(c.scale, n, j, false))
                      : prod;
        plain += prod;
      }
      if (sum != plain) ++p.unscaled_differs;
      p.want.push_back(sum);
    }
  return p;
}

class KindProductTest : public testing::TestWithParam<KindCase> {};

TEST_P(KindProductTest, DIsTheExactProductOfTheOperandsAsThePtxIsaLaysThemOut) {
  const KindCase& c = GetParam();
  const Product p = run_product(c);
  for (std::uint32_t i = 0; i < 32 * kN; ++i) {
    const double got = c.kind == MmaKind::I8 ? static_cast<double>(static_cast<std::int32_t>(p.d[i]))
                                             : static_cast<double>(std::bit_cast<float>(p.d[i]));
    ASSERT_EQ(got, p.want[i]) << c.name << " m " << i / kN << " n " << i % kN;
  }
  if (is_block_scaled(c.kind)) {
    EXPECT_GT(p.unscaled_differs, 32 * kN / 2) << "the scales change most of D";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKindAndType, KindProductTest,
                         testing::Values(KindCase{"Tf32", MmaKind::TF32, DataType::TF32, DataType::TF32},
                                         KindCase{"F16", MmaKind::F16, DataType::F16, DataType::F16},
                                         KindCase{"E4m3", MmaKind::F8F6F4, DataType::E4M3, DataType::E4M3},
                                         KindCase{"E5m2", MmaKind::F8F6F4, DataType::E5M2, DataType::E5M2},
                                         KindCase{"E2m3", MmaKind::F8F6F4, DataType::E2M3, DataType::E2M3},
                                         KindCase{"E3m2", MmaKind::F8F6F4, DataType::E3M2, DataType::E3M2},
                                         KindCase{"E2m1", MmaKind::F8F6F4, DataType::E2M1, DataType::E2M1},
                                         KindCase{"E2m1xE3m2", MmaKind::F8F6F4, DataType::E2M1, DataType::E3M2},
                                         KindCase{"S8", MmaKind::I8, DataType::S8, DataType::S8},
                                         KindCase{"U8xS8", MmaKind::I8, DataType::U8, DataType::S8},
                                         KindCase{"Mxf8E4m3Id2", MmaKind::MXF8F6F4, DataType::E4M3, DataType::E4M3,
                                                  ScaleVec::X1, DataType::UE8M0, 2},
                                         KindCase{"Mxf8E2m1xE2m3Id3", MmaKind::MXF8F6F4, DataType::E2M1, DataType::E2M3,
                                                  ScaleVec::X1, DataType::UE8M0, 3},
                                         KindCase{"Mxf4X2Id2", MmaKind::MXF4, DataType::E2M1, DataType::E2M1,
                                                  ScaleVec::X2, DataType::UE8M0, 2},
                                         KindCase{"Nvf4X4Ue4m3", MmaKind::MXF4NVF4, DataType::E2M1, DataType::E2M1,
                                                  ScaleVec::X4, DataType::UE4M3, 0},
                                         KindCase{"Mxf4nvf4X2Ue8m0", MmaKind::MXF4NVF4, DataType::E2M1, DataType::E2M1,
                                                  ScaleVec::X2, DataType::UE8M0, 0}),
                         [](const auto& info) { return std::string(info.param.name); });

// PTX: kind::f8f6f4 FP4 is 16 elements packed in the first 8 bytes of each 16-byte K chunk, FP6 16
// in the first 12 (6 bits each from bit 0 up); kind::mxf4* packs FP4 two per byte. Byte offsets
// within the first core-matrix row (K-major, no swizzle, LBO 128 for the second 16 bytes of K).
TEST(SubByteLayoutTest, PackedLayoutIsThePtxOne) {
  auto at = [](MmaKind kind, DataType t, std::uint32_t k) {
    const OperandBits b = operand_bits(kLayout, Major::K, kind, t, 0, k);
    return std::pair{b.byte, b.bit};
  };
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E2M1, 0), std::pair(0u, 0u));
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E2M1, 3), std::pair(1u, 4u));
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E2M1, 15), std::pair(7u, 4u));
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E2M1, 16), std::pair(128u, 0u));  // the second chunk
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E2M3, 1), std::pair(0u, 6u));     // bits 6-11
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E3M2, 15), std::pair(11u, 2u));   // bits 90-95
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E3M2, 17), std::pair(128u, 6u));
  EXPECT_EQ(at(MmaKind::MXF4, DataType::E2M1, 31), std::pair(15u, 4u));
  EXPECT_EQ(at(MmaKind::MXF4, DataType::E2M1, 32), std::pair(128u, 0u));
  EXPECT_EQ(at(MmaKind::F8F6F4, DataType::E4M3, 17), std::pair(129u, 0u));
}

TEST(KindProductTest, I8WrapsModulo2To32AndSaturatesWithTheSaturateBit) {
  const KindCase s8{"S8", MmaKind::I8, DataType::S8, DataType::S8};
  const std::uint32_t near_max = static_cast<std::uint32_t>(INT_MAX - 100);
  for (const bool saturate : {false, true}) {
    const Product p = run_product(s8, true, near_max, saturate);
    std::uint32_t over = 0;
    for (std::uint32_t i = 0; i < 32 * kN; ++i) {
      const std::int64_t exact = static_cast<std::int64_t>(INT_MAX - 100) + static_cast<std::int64_t>(p.want[i]);
      const std::int32_t got = static_cast<std::int32_t>(p.d[i]);
      if (exact > INT_MAX) ++over;
      ASSERT_EQ(got, saturate ? std::min<std::int64_t>(exact, INT_MAX) : static_cast<std::int32_t>(exact)) << i;
    }
    EXPECT_GT(over, 0u) << "some sums pass INT_MAX";
  }
}

// ------------------------------------------------------------------ misuse

void expect_mma_misuse(MmaKind kind, InstrDescriptor idesc, std::optional<Warp::BlockScale> scale,
                       const std::string& message, Rule rule = Rule::MmaInvalid) {
  const MisuseError e = expect_misuse(
      [&] {
        run_cta(
            [&](Warp& w) -> Task {
              const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 512);
              const SmemDescriptor op = encode(
                  SmemDescriptorFields{.start_address = 1024, .leading_byte_offset = 128, .stride_byte_offset = 256});
              if (scale)
                w.tcgen05_mma(kind, t, op, op, idesc, *scale, false);
              else
                w.tcgen05_mma(kind, t, op, op, idesc, false);
            },
            32, 32768);
      },
      rule);
  EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
}

// A warp keeps the last descriptor it decoded (WarpState::last_mma_decoded): a valid MMA first
// must not let a second one with other bits, or the same bits under another kind, skip decoding.
TEST(KindMisuseTest, AnInvalidDescriptorAfterAValidOneOfTheSameWarpIsStillCaught) {
  const InstrDescriptor good = encode(MmaKind::F16, {.n = 64});
  const SmemDescriptor op =
      encode(SmemDescriptorFields{.start_address = 1024, .leading_byte_offset = 128, .stride_byte_offset = 256});
  const auto after_good = [&](MmaKind kind, InstrDescriptor second) {
    return expect_misuse(
        [&] {
          run_cta(
              [&](Warp& w) -> Task {
                const TmemAddr t = co_await w.tcgen05_alloc(kSlot, 512);
                w.tcgen05_mma(MmaKind::F16, t, op, op, good, false);
                w.tcgen05_mma(kind, t, op, op, second, true);
              },
              32, 32768);
        },
        Rule::MmaInvalid);
  };
  EXPECT_NE(std::string(after_good(MmaKind::F16, InstrDescriptor{good.raw | 1u << 6}).what()).find("reserved bits"),
            std::string::npos);
  // Under kind::i8 the same bits name integer operands and an f32 D, which i8 does not take.
  const std::string i8 = after_good(MmaKind::I8, good).what();
  EXPECT_NE(i8.find("(kind::i8): D format 1 is not one of the kind's"), std::string::npos) << i8;
}

TEST(KindMisuseTest, AWrongScaleFactorIdNamesTheField) {
  const InstrDescriptorFields f{.a_type = DataType::E2M1, .b_type = DataType::E2M1, .n = 64, .b_sf_id = 1};
  expect_mma_misuse(MmaKind::MXF4, encode(MmaKind::MXF4, f),
                    Warp::BlockScale{TmemAddr{256}, TmemAddr{300}, ScaleVec::X2},
                    "scale-factor B ID 1 is not a valid byte for .scale_vec::2X");
  expect_mma_misuse(
      MmaKind::MXF4NVF4,
      encode(
          MmaKind::MXF4NVF4,
          {.a_type = DataType::E2M1, .b_type = DataType::E2M1, .n = 64, .scale_type = DataType::UE4M3, .a_sf_id = 2}),
      Warp::BlockScale{TmemAddr{256}, TmemAddr{300}, ScaleVec::X4},
      "scale-factor A ID 2 is not a valid byte for .scale_vec::4X");
}

TEST(KindMisuseTest, AScaleVecOrScaleTypeTheKindDoesNotTake) {
  expect_mma_misuse(MmaKind::MXF8F6F4,
                    encode(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 64}),
                    Warp::BlockScale{TmemAddr{256}, TmemAddr{300}, ScaleVec::X2},
                    "kind::mxf8f6f4 takes no .scale_vec::2X with ue8m0");
  expect_mma_misuse(
      MmaKind::MXF4NVF4,
      encode(MmaKind::MXF4NVF4,
             {.a_type = DataType::E2M1, .b_type = DataType::E2M1, .n = 64, .scale_type = DataType::UE4M3}),
      Warp::BlockScale{TmemAddr{256}, TmemAddr{300}, ScaleVec::X2},
      "kind::mxf4nvf4 takes no .scale_vec::2X with ue4m3");
  expect_mma_misuse(MmaKind::MXF8F6F4,
                    encode(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 64}),
                    std::nullopt, "kind::mxf8f6f4 needs .block_scale");
  expect_mma_misuse(
      MmaKind::F8F6F4, encode(MmaKind::F8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 64}),
      Warp::BlockScale{TmemAddr{256}, TmemAddr{300}, ScaleVec::X1}, "kind::f8f6f4 takes no scale factors");
}

TEST(KindMisuseTest, AShapeTheKindDoesNotHave) {
  expect_mma_misuse(MmaKind::MXF8F6F4,
                    encode(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .m = 64, .n = 64}),
                    Warp::BlockScale{TmemAddr{256}, TmemAddr{300}, ScaleVec::X1}, "M (bits 27-28, M >> 7) is 0");
  expect_mma_misuse(
      MmaKind::I8,
      encode(MmaKind::I8, {.a_type = DataType::S8, .b_type = DataType::S8, .d_type = DataType::S32, .n = 40}),
      std::nullopt, "N=40 is not a kind::i8 cta_group::1 N");
}

TEST(KindMisuseTest, ScaleFactorsOutsideTheAllocationOrOffLaneZero) {
  expect_mma_misuse(MmaKind::MXF8F6F4,
                    encode(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 256}),
                    Warp::BlockScale{TmemAddr{256}, TmemAddr{508}, ScaleVec::X1}, "", Rule::TmemOutOfAllocation);
  expect_mma_misuse(MmaKind::MXF8F6F4,
                    encode(MmaKind::MXF8F6F4, {.a_type = DataType::E4M3, .b_type = DataType::E4M3, .n = 64}),
                    Warp::BlockScale{TmemAddr::at(32, 256), TmemAddr{300}, ScaleVec::X1}, "scale A address");
}

TEST(KindMisuseTest, SubByteOperandsAreKMajorOnly) {
  // The descriptor's transpose bit on an FP4 operand: PTX lays sub-byte elements out K-major only.
  const std::uint32_t raw =
      encode(MmaKind::F8F6F4, {.a_type = DataType::E2M1, .b_type = DataType::E4M3, .n = 64}).raw | 1u << 15;
  expect_mma_misuse(MmaKind::F8F6F4, InstrDescriptor{raw}, std::nullopt, "K-major only");
}

// ------------------------------------------------------------------ timing

// The SMEM operand bound is 32 bytes of K per row for every kind: mxf4 M = 128, N = 64 SS reads
// (128 + 64) x 32 = 6144 bytes = 48 cycles at 128 B/cycle > its math 32, so a second MMA starts 48
// after the first: 1 + 48 + 32 + 100 + 5 + 15.
TEST(KindTimingTest, PackedFp4ReadsThirtyTwoBytesOfKPerRow) {
  Cycle elapsed = 0;
  run_cta(
      [&](Warp& w) -> Task {
        const TmemAddr d = co_await w.tcgen05_alloc(kSlot, 512);
        w.mbarrier_init(kBar, 1);
        const SmemDescriptor op =
            encode(SmemDescriptorFields{.start_address = 1024, .leading_byte_offset = 128, .stride_byte_offset = 256});
        const auto idesc =
            encode(MmaKind::MXF4, {.a_type = DataType::E2M1, .b_type = DataType::E2M1, .m = 128, .n = 64});
        const Cycle t = w.now();
        for (int i = 0; i < 2; ++i)
          w.tcgen05_mma(MmaKind::MXF4, d, op, op, idesc, {d + 256, d + 300, ScaleVec::X2}, i > 0);
        w.tcgen05_commit(kBar);
        co_await w.mbarrier_wait(kBar, 0);
        elapsed = w.now() - t;
        w.tcgen05_dealloc(d, 512);
      },
      32, 32768, Mode::Timing);
  EXPECT_EQ(elapsed, 1u + 48u + 32u + 100u + 5u + 15u);
}

}  // namespace
}  // namespace bwsim
