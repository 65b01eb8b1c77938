#include "bwsim/cli/HugePageHeap.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace bwsim {
namespace {

bool thp_mode_never() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return !mode || !std::getline(mode, line) || line.find("[never]") != std::string::npos;
}

}  // namespace

std::optional<std::string> huge_page_tunables(const char* current, bool opted_out, bool preloaded, bool thp_never) {
  const std::string tunables = current ? current : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos || opted_out || preloaded || thp_never)
    return std::nullopt;
  return tunables.empty() ? "glibc.malloc.hugetlb=1" : tunables + ":glibc.malloc.hugetlb=1";
}

void reexec_with_huge_page_heap(char** argv) {
  const char* current = std::getenv("GLIBC_TUNABLES");
  const std::optional<std::string> tunables = huge_page_tunables(current, std::getenv("BWSIM_NO_HUGE_PAGES") != nullptr,
                                                                 std::getenv("LD_PRELOAD") != nullptr, thp_mode_never());
  if (!tunables) return;
  const std::optional<std::string> before = current ? std::optional<std::string>(current) : std::nullopt;
  if (setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  if (before) setenv("GLIBC_TUNABLES", before->c_str(), 1);  // the exec failed: run as started
  else unsetenv("GLIBC_TUNABLES");
}

}  // namespace bwsim
