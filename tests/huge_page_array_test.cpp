// core/HugePageArray: the memory model's large tables. Every element starts at the given value in
// either path, and a table of megabytes starts on a 2 MiB boundary (where huge pages can back it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "bwsim/core/HugePageArray.hpp"

namespace bwsim {
namespace {

struct Pair {
  std::uint64_t key;
  std::uint32_t value;
};

TEST(HugePageArrayTest, ASmallArrayHoldsItsValuesInOrdinaryMemory) {
  HugePageArray<Pair> a(5, Pair{~0ull, 7});
  ASSERT_EQ(a.size(), 5u);
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](const Pair& p) { return p.key == ~0ull && p.value == 7; }));
  a[4].value = 9;
  EXPECT_EQ(a[4].value, 9u);
  EXPECT_EQ(a[3].value, 7u);
}

TEST(HugePageArrayTest, ALargeArrayStartsOnAHugePageBoundaryWithEveryValueSet) {
  HugePageArray<std::uint64_t> a((3u << 20) / 8 + 5, 3);  // just over 3 MiB
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&a[0]) % (2u << 20), 0u);
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](std::uint64_t v) { return v == 3; }));
  std::fill(a.begin(), a.end(), 4);
  EXPECT_EQ(a[a.size() - 1], 4u);
}

}  // namespace
}  // namespace bwsim
