#pragma once
// The bwsim executable's heap on transparent huge pages. A full-chip run touches per-SM state all
// over a heap of tens of megabytes; on 4 KiB pages most of those touches also miss the TLB (the
// main job ran 2.23-2.31 s with them, 1.99-2.03 s on huge pages, peak memory 25 -> 44 MB, on a
// 2-core EPYC VM). glibc asks the kernel for huge pages for its heap only when its tunable
// glibc.malloc.hugetlb=1 is set before the process starts (Linux's default THP mode, "madvise",
// needs the ask), so the executable restarts itself once with it set.
#include <optional>
#include <string>

namespace bwsim {

// What the process's GLIBC_TUNABLES should become for a heap on huge pages: `current` (null: unset)
// with glibc.malloc.hugetlb=1 appended; nothing where it mentions glibc.malloc.hugetlb already (set
// by the user, or by an earlier re-execution) or where `opted_out` (BWSIM_NO_HUGE_PAGES), a tool
// preloads itself (`preloaded`: valgrind, which tools/cost.sh runs the executable under, would not
// follow the exec) or the kernel's THP mode is "never".
std::optional<std::string> huge_page_tunables(const char* current, bool opted_out, bool preloaded, bool thp_never);

// Re-executes the running program (/proc/self/exe, the same arguments, the environment with the
// tunables above) where huge_page_tunables asks for it; returns only if it did not (or the exec
// failed, leaving the environment as it was).
void reexec_with_huge_page_heap(char** argv);

}  // namespace bwsim
