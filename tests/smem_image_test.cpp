// The SMEM image reads as zeros until written, whether its block is fresh or a reused one another
// CTA wrote all over (cleared piece by piece as accesses reach it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "bwsim/hw/sm/Smem.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kSize = 232448;  // the attention kernel's CTA: 3632 bytes a piece

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
  EXPECT_TRUE(all_zero(s.bytes(3630, 4)));
  EXPECT_TRUE(all_zero(s.bytes(kSize - 8, 8)));
  s.bytes(100, 1)[0] = std::byte{7};
  EXPECT_EQ(s.bytes(100, 1)[0], std::byte{7});  // a cleared piece is not cleared again
  // Every other byte reads as zero, whichever piece an access first reaches.
  const auto whole = s.bytes(0, kSize);
  EXPECT_EQ(std::count(whole.begin(), whole.end(), std::byte{0}), kSize - 1);
}

TEST(SmemImage, ASizeThatIsNotAMultipleOfThePieceIsClearedToItsEnd) {
  constexpr std::uint32_t kOdd = 1000;  // 16-byte pieces, the last one short
  {
    Smem dirty(kOdd);
    std::memset(dirty.bytes(0, kOdd).data(), 0xff, kOdd);
  }
  Smem s(kOdd);
  EXPECT_TRUE(all_zero(s.bytes(990, 10)));
  EXPECT_TRUE(all_zero(s.bytes(0, kOdd)));
}

}  // namespace
}  // namespace bwsim
