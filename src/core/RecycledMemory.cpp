#include "bwsim/core/RecycledMemory.hpp"

#include <array>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace bwsim::recycled {
namespace {

// Sizes up to kSmallLimit in kGrain steps get a list each (coroutine frames); larger sizes (a
// few distinct ones per run: the CTA arrays) are searched in a short list.
constexpr std::size_t kGrain = 16, kSmallLimit = 4096;
// A cache holds at most this many bytes of one size, so a run's peak of live CTAs or frames is
// kept but a sweep of varying sizes cannot accumulate memory without bound.
constexpr std::size_t kBytesPerSize = std::size_t{64} << 20;

struct Cache {
  std::array<std::vector<void*>, kSmallLimit / kGrain + 1> small;
  std::vector<std::pair<std::size_t, std::vector<void*>>> large;
  ~Cache() {
    for (auto& list : small)
      for (void* p : list) std::free(p);
    for (auto& [bytes, list] : large)
      for (void* p : list) std::free(p);
  }
  std::vector<void*>& list(std::size_t bytes) {
    if (bytes <= kSmallLimit && bytes % kGrain == 0) return small[bytes / kGrain];
    for (auto& [b, list] : large)
      if (b == bytes) return list;
    return large.emplace_back(bytes, std::vector<void*>{}).second;
  }
};
thread_local Cache cache;

}  // namespace

void* take(std::size_t bytes) {
  std::vector<void*>& l = cache.list(bytes);
  if (l.empty()) return nullptr;
  void* p = l.back();
  l.pop_back();
  return p;
}

void give(void* p, std::size_t bytes) {
  std::vector<void*>& l = cache.list(bytes);
  if ((l.size() + 1) * bytes > kBytesPerSize) {
    std::free(p);
    return;
  }
  l.push_back(p);
}

Block take_or_calloc(std::size_t bytes) {
  if (void* p = take(bytes)) return {p, false};
  if (void* p = std::calloc(1, bytes)) return {p, true};
  throw std::bad_alloc();
}

}  // namespace bwsim::recycled
