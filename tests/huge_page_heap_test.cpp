// cli/HugePageHeap: when the bwsim executable restarts itself with glibc's huge-page heap tunable,
// and with what GLIBC_TUNABLES.
#include <gtest/gtest.h>

#include "bwsim/cli/HugePageHeap.hpp"

namespace bwsim {
namespace {

TEST(HugePageHeapTest, TheTunableIsAddedToWhatIsSetAndNotTwice) {
  EXPECT_EQ(huge_page_tunables(nullptr, false, false, false), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables("", false, false, false), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables("glibc.malloc.arena_max=2", false, false, false),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  // after the re-execution, or set by the user either way: no second restart
  EXPECT_EQ(huge_page_tunables("glibc.malloc.hugetlb=1", false, false, false), std::nullopt);
  EXPECT_EQ(huge_page_tunables("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0", false, false, false), std::nullopt);
}

TEST(HugePageHeapTest, NoRestartWhenOptedOutPreloadedOrWithoutHugePages) {
  EXPECT_EQ(huge_page_tunables(nullptr, true, false, false), std::nullopt);   // BWSIM_NO_HUGE_PAGES
  EXPECT_EQ(huge_page_tunables(nullptr, false, true, false), std::nullopt);   // valgrind's LD_PRELOAD
  EXPECT_EQ(huge_page_tunables(nullptr, false, false, true), std::nullopt);   // THP mode "never"
}

}  // namespace
}  // namespace bwsim
