// The UMMA descriptors bit for bit (PTX tcgen05 "Shared memory descriptor" / "Instruction
// descriptor"; CUTLASS mma_sm100_desc.hpp) and the canonical-layout address function, plus the
// element formats the MMA reads.
#include <gtest/gtest.h>

#include <cmath>

#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {
namespace {

TEST(SmemDescriptorTest, EncodesEveryFieldAtItsBits) {
  // start 0x1040 >> 4 = 0x104 (bits 0-13), LBO 16 >> 4 = 1 (bits 16-29), SBO 1024 >> 4 = 0x40
  // (bits 32-45), the fixed 0b001 at bits 46-48, base offset 0, layout 2 (128B) at bits 61-63.
  const SmemDescriptor d = encode(SmemDescriptorFields{.start_address = 0x1040, .leading_byte_offset = 16,
                                                       .stride_byte_offset = 1024, .layout = UmmaLayout::Swizzle128B});
  EXPECT_EQ(d.raw, 0x4000'4040'0001'0104ull);
  SmemDescriptorFields f;
  ASSERT_FALSE(decode(d, f));
  EXPECT_EQ(f.start_address, 0x1040u);
  EXPECT_EQ(f.leading_byte_offset, 16u);
  EXPECT_EQ(f.stride_byte_offset, 1024u);
  EXPECT_EQ(f.layout, UmmaLayout::Swizzle128B);
}

TEST(SmemDescriptorTest, LayoutCodesOfEachSwizzle) {
  for (auto [sw, code] : {std::pair{Swizzle::None, 0ull}, {Swizzle::B128, 2ull}, {Swizzle::B64, 4ull}, {Swizzle::B32, 6ull}}) {
    const SmemDescriptor d = encode(SmemDescriptorFields{.layout = umma_layout_of(sw)});
    EXPECT_EQ(d.raw >> 61, code);
    SmemDescriptorFields f;
    ASSERT_FALSE(decode(d, f));
    EXPECT_EQ(swizzle_of(f.layout), sw);
  }
}

TEST(SmemDescriptorTest, RejectsAMissingVersionConstantAndReservedLayouts) {
  SmemDescriptorFields f;
  EXPECT_TRUE(decode(SmemDescriptor{0x0000'0040'0001'0100ull}, f));  // bits 46-48 zero
  EXPECT_TRUE(decode(SmemDescriptor{encode(SmemDescriptorFields{}).raw | (3ull << 61)}, f));  // layout code 3
}

struct AddressCase {
  const char* name;
  SmemDescriptorFields f;
  Major major;
  std::uint32_t mn, k;
  std::uint32_t want;  // hand-computed from the canonical layout, then the swizzle XOR
};

class OperandAddressTest : public testing::TestWithParam<AddressCase> {};

TEST_P(OperandAddressTest, MatchesTheHandComputedByte) {
  const AddressCase& c = GetParam();
  EXPECT_EQ(operand_address(c.f, c.major, 2, c.mn, c.k), c.want);
}

// bf16 elements. K-major: row r of an 8-row group is one swizzle row (span bytes) apart, groups
// SBO apart, K contiguous; no swizzle: 8x16B core matrices, K chunks LBO apart. MN-major: M/N
// contiguous within the span (16 B without swizzle), 8 K-rows per atom.
INSTANTIATE_TEST_SUITE_P(
    CanonicalLayouts, OperandAddressTest,
    testing::Values(
        // 0x1000 + 1*128 + 1*1024 + 40 = 0x14A8; bits 7-9 = 1 -> chunk ^ 1 -> 0x14B8.
        AddressCase{"KMajor128B", {.start_address = 0x1000, .stride_byte_offset = 1024, .layout = UmmaLayout::Swizzle128B},
                    Major::K, 9, 20, 0x14B8},
        // 0x800 + 2*64 + 1*512 + 40 = 0xAA8; bits 7-8 = 1 -> 0xAB8.
        AddressCase{"KMajor64B", {.start_address = 0x800, .stride_byte_offset = 512, .layout = UmmaLayout::Swizzle64B},
                    Major::K, 10, 20, 0xAB8},
        // 0x400 + 5*32 + 1*256 + 10 = 0x5AA; bit 7 = 1 -> 0x5BA.
        AddressCase{"KMajor32B", {.start_address = 0x400, .stride_byte_offset = 256, .layout = UmmaLayout::Swizzle32B},
                    Major::K, 13, 5, 0x5BA},
        // 3*16 + 1*256 (SBO) + 26 % 16 + 1*128 (LBO) = 442.
        AddressCase{"KMajorNone", {.leading_byte_offset = 128, .stride_byte_offset = 256}, Major::K, 11, 13, 442},
        // 0x2000 + 12 + 1*2048 (LBO) + 3*128 + 1*1024 (SBO) = 0x2D8C; bits 7-9 = 3 -> 0x2DBC.
        AddressCase{"MnMajor128B",
                    {.start_address = 0x2000, .leading_byte_offset = 2048, .stride_byte_offset = 1024,
                     .layout = UmmaLayout::Swizzle128B},
                    Major::MN, 70, 11, 0x2DBC},
        // 18 % 16 + 1*128 (SBO) + 2*16 + 1*256 (LBO) = 418.
        AddressCase{"MnMajorNone", {.leading_byte_offset = 256, .stride_byte_offset = 128}, Major::MN, 9, 10, 418}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(InstrDescriptorTest, EncodesBf16M128N256) {
  // D f32 (1 << 4), A/B bf16 (1 << 7, 1 << 10), K-major, N >> 3 = 32 at bit 17, M >> 4 = 8 at bit 24.
  const InstrDescriptor d = encode(MmaKind::F16, InstrDescriptorFields{.m = 128, .n = 256});
  EXPECT_EQ(d.raw, (1u << 4) | (1u << 7) | (1u << 10) | (32u << 17) | (8u << 24));
  InstrDescriptorFields f;
  ASSERT_FALSE(decode(MmaKind::F16, d, f));
  EXPECT_EQ(f.m, 128u);
  EXPECT_EQ(f.n, 256u);
  EXPECT_EQ(f.a_type, DataType::BF16);
}

TEST(InstrDescriptorTest, Fp8CodesAndMajorBits) {
  const InstrDescriptor d =
      encode(MmaKind::F8F6F4, InstrDescriptorFields{.a_type = DataType::E4M3, .b_type = DataType::E5M2,
                                                    .a_major = Major::MN, .b_major = Major::K, .m = 64, .n = 8});
  EXPECT_EQ(d.raw, (1u << 4) | (0u << 7) | (1u << 10) | (1u << 15) | (1u << 17) | (4u << 24));
  InstrDescriptorFields f;
  ASSERT_FALSE(decode(MmaKind::F8F6F4, d, f));
  EXPECT_EQ(f.b_type, DataType::E5M2);
  EXPECT_EQ(f.a_major, Major::MN);
}

TEST(InstrDescriptorTest, RejectsWhatIsNotModeled) {
  InstrDescriptorFields f;
  const std::uint32_t base = encode(MmaKind::F16, InstrDescriptorFields{}).raw;
  EXPECT_TRUE(decode(MmaKind::F16, InstrDescriptor{base & ~(3u << 4)}, f));  // D f16
  EXPECT_TRUE(decode(MmaKind::F16, InstrDescriptor{base | (1u << 2) | 3u}, f));  // sparsity selector 3
  EXPECT_TRUE(decode(MmaKind::F16, InstrDescriptor{base | (7u << 7)}, f));   // A format 7
  EXPECT_THROW(encode(MmaKind::F16, InstrDescriptorFields{.a_type = DataType::E4M3}), InputError);
}

TEST(NumberFormatsTest, DecodesAndRoundsEachFormat) {
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(bf16_to_float(0xC040), -3.0f);
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);                    // largest e4m3
  EXPECT_EQ(e5m2_to_float(0x7B), 57344.0f);                  // largest e5m2
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));      // smallest e4m3 subnormal
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);  // tie rounds to even
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);                 // rounds past the largest half: infinity
  EXPECT_EQ(float_to_e4m3(1000.0f), 0x7E);                    // fp8 saturates
  EXPECT_EQ(float_to_e4m3(-1.0625f), 0xB8);                   // tie 1.0625 -> 1.0 (even)
  EXPECT_EQ(float_to_e5m2(0.75f), 0x3A);
  for (std::uint32_t v = 0; v < 256; ++v)                     // every finite e4m3 round-trips
    if ((v & 0x7F) != 0x7F) {
      EXPECT_EQ(float_to_e4m3(e4m3_to_float(static_cast<std::uint8_t>(v))), v == 0x80 ? 0x80u : v);
    }
}

// OCP MX v1.0 §5.3: every code of the FP6/FP4 formats, checked against hand-listed magnitudes.
TEST(NumberFormatsTest, DecodesEveryFp6AndFp4CodeAndSaturates) {
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (std::uint8_t v = 0; v < 16; ++v) {
    EXPECT_EQ(e2m1_to_float(v), (v & 8 ? -1 : 1) * e2m1[v & 7]) << int(v);
    EXPECT_EQ(float_to_e2m1(e2m1_to_float(v)), v);  // every code round-trips, -0 (0x8) included
  }
  EXPECT_EQ(e2m3_to_float(0x1F), 7.5f);                 // largest e2m3: 2^1 x 1.875
  EXPECT_EQ(e2m3_to_float(0x01), 0.125f);               // smallest subnormal: 2^0 x 1/8
  EXPECT_EQ(e2m3_to_float(0x21), -0.125f);              // bit 5 is the sign
  EXPECT_EQ(e3m2_to_float(0x1F), 28.0f);                // largest e3m2: 2^4 x 1.75
  EXPECT_EQ(e3m2_to_float(0x01), 0.0625f);              // smallest subnormal: 2^-2 x 1/4
  EXPECT_EQ(float_to_e2m1(100.0f), 0x7);                // saturates at 6
  EXPECT_EQ(float_to_e2m1(-5.0f), 0xE);                 // tie 5 between 4 (0b110, even) and 6 -> -4
  EXPECT_EQ(float_to_e2m1(0.25f), 0x0);                 // tie 0.25 between 0 (even) and 0.5
  EXPECT_EQ(float_to_e3m2(1e9f), 0x1F);
  EXPECT_EQ(float_to_e2m3(std::nanf("")), 0x1F);        // no NaN in the format: saturates
  for (std::uint8_t v = 0; v < 64; ++v) {
    EXPECT_EQ(float_to_e2m3(e2m3_to_float(v)), v);
    EXPECT_EQ(float_to_e3m2(e3m2_to_float(v)), v);
  }
  EXPECT_EQ(ue8m0_to_float(127), 1.0f);
  EXPECT_EQ(ue8m0_to_float(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(ue8m0_to_float(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(ue8m0_to_float(0xFF)));
  EXPECT_EQ(ue4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(ue4m3_to_float(0xB8), 1.0f);                 // the sign bit is not read
  EXPECT_EQ(load_as_float(DataType::S8, reinterpret_cast<const std::byte*>("\x80")), -128.0f);
}

}  // namespace
}  // namespace bwsim
