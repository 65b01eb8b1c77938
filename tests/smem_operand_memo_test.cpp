// SmemOperandMemo: a tensor core's last MMA operand, reused when the next descriptor differs only in
// its start address. Its answers must be decode()'s and mma_operand_span()'s exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "bwsim/hw/tensor/sm100/SmemOperandMemo.hpp"

namespace bwsim {
namespace {

TEST(SmemOperandMemoTest, SpanOfAK128BSwizzledBf16OperandByHand) {
  // 128 rows x K 16 bf16, K-major, 128B swizzle, SBO 1024, at 0x1040. Corner offsets: row 0 k 0
  // at 0; row 0 k 15 at 30 bytes; row 127 at (127 % 8) * 128 + (127 / 8) * 1024 = 16256, k 15 at
  // 16286. Span: 0x1040 & ~127 = 4096 up to ((4160 + 16286) | 127) + 1 = 20480.
  const SmemDescriptorFields f{.start_address = 0x1040, .stride_byte_offset = 1024, .layout = UmmaLayout::Swizzle128B};
  const SmemSpan direct = mma_operand_span(f, Major::K, MmaKind::F16, DataType::BF16, 128);
  EXPECT_EQ(direct.begin, 4096u);
  EXPECT_EQ(direct.end, 20480u);
  SmemOperandMemo memo;
  for (int twice = 0; twice < 2; ++twice) {  // computed, then from the memo
    const SmemSpan s = memo.span(f, Major::K, MmaKind::F16, DataType::BF16, 128);
    EXPECT_EQ(s.begin, 4096u);
    EXPECT_EQ(s.end, 20480u);
  }
  // The next k-block (start + 32 bytes) stays in the same 128-byte rows: 4192 & ~127 = 4096 up to
  // ((4192 + 16286) | 127) + 1 = 20480. One 1024 bytes on: 5184 & ~127 = 5120 up to
  // ((5184 + 16286) | 127) + 1 = 21504.
  SmemDescriptorFields next = f;
  next.start_address += 32;
  SmemSpan s = memo.span(next, Major::K, MmaKind::F16, DataType::BF16, 128);
  EXPECT_EQ(s.begin, 4096u);
  EXPECT_EQ(s.end, 20480u);
  next.start_address = f.start_address + 1024;
  s = memo.span(next, Major::K, MmaKind::F16, DataType::BF16, 128);
  EXPECT_EQ(s.begin, 5120u);
  EXPECT_EQ(s.end, 21504u);
}

TEST(SmemOperandMemoTest, DecodesOnlyADescriptorThatDiffersInItsStartAddress) {
  const SmemDescriptorFields f{.start_address = 0x2000, .leading_byte_offset = 16, .stride_byte_offset = 1024,
                               .layout = UmmaLayout::Swizzle64B};
  SmemOperandMemo memo;
  SmemDescriptorFields out;
  EXPECT_FALSE(memo.decoded(encode(f), out));  // nothing kept yet
  memo.keep(encode(f), f);
  SmemDescriptorFields moved = f;
  moved.start_address = 0x2ff0;
  ASSERT_TRUE(memo.decoded(encode(moved), out));
  EXPECT_EQ(out.start_address, 0x2ff0u);
  EXPECT_EQ(out.leading_byte_offset, 16u);
  EXPECT_EQ(out.stride_byte_offset, 1024u);
  EXPECT_EQ(out.layout, UmmaLayout::Swizzle64B);
  SmemDescriptorFields other_sbo = f, other_lbo = f, other_layout = f;
  other_sbo.stride_byte_offset = 2048;
  other_lbo.leading_byte_offset = 32;
  other_layout.layout = UmmaLayout::Swizzle128B;
  EXPECT_FALSE(memo.decoded(encode(other_sbo), out));
  EXPECT_FALSE(memo.decoded(encode(other_lbo), out));
  EXPECT_FALSE(memo.decoded(encode(other_layout), out));
  SmemDescriptor bad_version = encode(f);
  bad_version.raw &= ~(7ull << 46);  // decode() rejects it: the memo must not accept it either
  EXPECT_FALSE(memo.decoded(bad_version, out));
}

// The span as its definition gives it: the 128-byte rows of its four corner elements' addresses
// (operand_address applies the swizzle, which moves only bits 4-6).
SmemSpan corner_span(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t, std::uint32_t rows,
                     std::uint32_t k_times) {
  std::uint32_t k = mma_k(kind) * k_times, elem_bytes = size_of(t);
  if (kind == MmaKind::MXF4 || kind == MmaKind::MXF4NVF4) {
    major = Major::K;
    elem_bytes = 1;
    k /= 2;
  }
  SmemSpan s{~0u, 0};
  for (std::uint32_t r : {0u, rows - 1})
    for (std::uint32_t kk : {0u, k - 1}) {
      const std::uint32_t a = operand_address(f, major, elem_bytes, r, kk);
      s.begin = std::min(s.begin, a & ~127u);
      s.end = std::max(s.end, (a | 127u) + 1);
    }
  return s;
}

// A long random run of operands through one memo, most of them k-steps of the last (the memo's
// case), the rest the last shape with one field changed (so a memo that ignored that field would
// answer with the old one's span), or a wholly new shape: every answer is the direct one.
TEST(SmemOperandMemoTest, AgreesWithTheDirectDecodeAndSpanOverARandomRun) {
  std::mt19937 rng(7);
  const UmmaLayout layouts[] = {UmmaLayout::SwizzleNone, UmmaLayout::Swizzle32B, UmmaLayout::Swizzle64B,
                                UmmaLayout::Swizzle128B};
  const std::pair<MmaKind, DataType> types[] = {{MmaKind::F16, DataType::BF16},
                                                {MmaKind::TF32, DataType::TF32},
                                                {MmaKind::F8F6F4, DataType::E4M3},
                                                {MmaKind::F8F6F4, DataType::E2M1},
                                                {MmaKind::MXF4, DataType::E2M1}};
  const std::uint32_t byte_offsets[] = {16, 128, 1024, 4096};
  SmemOperandMemo memo;
  SmemDescriptorFields f{.leading_byte_offset = 16, .stride_byte_offset = 1024};
  Major major = Major::K;
  std::pair<MmaKind, DataType> type = types[0];
  std::uint32_t rows = 128, k_times = 1;
  int hits = 0;
  for (int i = 0; i < 20000; ++i) {
    switch (rng() % 16) {  // one field changed (or all, or none: a k-step)
      case 0: f.leading_byte_offset = byte_offsets[rng() % 4]; break;
      case 1: f.stride_byte_offset = byte_offsets[rng() % 4]; break;
      case 2: f.layout = layouts[rng() % 4]; break;
      case 3: major = major == Major::K ? Major::MN : Major::K; break;
      case 4: type = types[rng() % 5]; break;
      case 5: rows = 8u << (rng() % 6); break;
      case 6: k_times = 3 - k_times; break;
      case 7:
        f.leading_byte_offset = byte_offsets[rng() % 4];
        f.stride_byte_offset = byte_offsets[rng() % 4];
        f.layout = layouts[rng() % 4];
        major = rng() % 2 ? Major::K : Major::MN;
        type = types[rng() % 5];
        rows = 8u << (rng() % 6);
        k_times = 1 + rng() % 2;
        break;
      default: break;
    }
    f.start_address = 16 * (rng() % 8192);
    const SmemDescriptor d = encode(f);
    SmemDescriptorFields direct, memoised;
    ASSERT_FALSE(decode(d, direct));
    if (memo.decoded(d, memoised)) {
      ++hits;
      EXPECT_EQ(memoised.start_address, direct.start_address);
      EXPECT_EQ(memoised.leading_byte_offset, direct.leading_byte_offset);
      EXPECT_EQ(memoised.stride_byte_offset, direct.stride_byte_offset);
      EXPECT_EQ(memoised.layout, direct.layout);
    } else {
      memo.keep(d, direct);
    }
    const SmemSpan want = corner_span(direct, major, type.first, type.second, rows, k_times);
    const SmemSpan direct_span = mma_operand_span(direct, major, type.first, type.second, rows, k_times);
    ASSERT_EQ(direct_span.begin, want.begin) << "operand " << i;
    ASSERT_EQ(direct_span.end, want.end) << "operand " << i;
    const SmemSpan got = memo.span(direct, major, type.first, type.second, rows, k_times);
    ASSERT_EQ(got.begin, want.begin) << "operand " << i;
    ASSERT_EQ(got.end, want.end) << "operand " << i;
  }
  EXPECT_GT(hits, 10000);  // the run exercised the memo
}

}  // namespace
}  // namespace bwsim
