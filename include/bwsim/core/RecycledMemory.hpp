#pragma once
// Blocks freed by one run, kept per thread for the next allocation of the same size: coroutine
// frames (a warp program's sub-tasks, one per call) and the per-CTA arrays (SMEM image, barrier
// index) are allocated and freed thousands of times per run, and fresh memory from the system
// costs a page fault per 4 KiB touched, while a recycled block is already mapped. Blocks are
// plain malloc memory; a thread's cache is freed when the thread ends.
#include <cstddef>

namespace bwsim::recycled {

// A cached block of exactly `bytes` (its contents are whatever its last user left), or nullptr.
void* take(std::size_t bytes);
// Returns `p` (from malloc or calloc, `bytes` long) to this thread's cache, or frees it when the
// cache of that size is full.
void give(void* p, std::size_t bytes);

// A cached block of `bytes` (its contents its last user's), else fresh zero pages from calloc
// (zeroed); throws std::bad_alloc.
struct Block {
  void* p;
  bool zeroed;
};
Block take_or_calloc(std::size_t bytes);

// A unique_ptr deleter that gives the block back (give).
struct GiveBack {
  std::size_t bytes;
  void operator()(void* p) const { give(p, bytes); }
};

}  // namespace bwsim::recycled
