// The SMEM image reads as zeros until written, whether its block is fresh or a reused one another
// CTA wrote all over (cleared piece by piece as accesses reach it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "bwsim/hw/sm/Smem.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kSize = 232448;  // the attention kernel's CTA: 57 pieces of 4 KiB

bool all_zero(std::span<const std::byte> s) {
  return std::all_of(s.begin(), s.end(), [](std::byte b) { return b == std::byte{0}; });
}

TEST(SmemImage, AReusedBlockReadsAsZerosEverywhere) {
  {
    Smem dirty(kSize);
    std::memset(dirty.bytes(0, kSize).data(), 0xab, kSize);
  }  // its block goes back to this thread's cache
  Smem s(kSize);
  // A small access across the boundary of pieces 0 and 1, then one inside the last piece.
  EXPECT_TRUE(all_zero(s.bytes(4094, 4)));
  EXPECT_TRUE(all_zero(s.bytes(kSize - 8, 8)));
  s.bytes(100, 1)[0] = std::byte{7};
  EXPECT_EQ(s.bytes(100, 1)[0], std::byte{7});  // a cleared piece is not cleared again
  // Every other byte reads as zero, whichever piece an access first reaches.
  const auto whole = s.bytes(0, kSize);
  EXPECT_EQ(std::count(whole.begin(), whole.end(), std::byte{0}), kSize - 1);
}

// A reused image of `size` bytes: `first` is read before anything else, then the whole image.
void expect_reused_reads_as_zeros(std::uint32_t size, std::uint32_t first_offset, std::uint32_t first_len) {
  {
    Smem dirty(size);
    if (size) std::memset(dirty.bytes(0, size).data(), 0xff, size);
  }
  Smem s(size);
  EXPECT_TRUE(all_zero(s.bytes(first_offset, first_len)));
  EXPECT_TRUE(all_zero(s.bytes(0, size)));
}

TEST(SmemImage, EveryShapeOfImageAndFirstAccessReadsAsZeros) {
  {
    SCOPED_TRACE("1000 bytes: 16-byte pieces, the last one short");
    expect_reused_reads_as_zeros(1000, 990, 10);
  }
  {
    SCOPED_TRACE("all 64 pieces cleared by the first access");
    expect_reused_reads_as_zeros(64 * 4096, 0, 64 * 4096);
  }
  {
    SCOPED_TRACE("fewer bytes than pieces");
    expect_reused_reads_as_zeros(10, 3, 2);
  }
  {
    SCOPED_TRACE("an empty image");
    expect_reused_reads_as_zeros(0, 0, 0);
  }
}

}  // namespace
}  // namespace bwsim
