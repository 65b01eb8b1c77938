#pragma once
// A fixed-size array of trivially copyable values, for the large, randomly indexed tables of the
// memory model (the GPC join records, hw/memory/GpcJoinTable): where it spans megabytes it is allocated
// on 2 MiB boundaries and the kernel is asked to back it with transparent huge pages
// (madvise(MADV_HUGEPAGE); Linux's default "madvise" mode needs the ask), so that a random slot
// costs a cache miss and not also a page walk (a 4 KiB-page table of 20 MiB exceeds any TLB).
// Elsewhere, or where the kernel declines, it is an ordinary allocation: results never depend on it.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace bwsim {

template <class T>
class HugePageArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  HugePageArray(std::size_t n, const T& value) : n_(n), data_(allocate(n)) {
    for (std::size_t i = 0; i < n; ++i) new (&data_.get()[i]) T(value);
  }
  std::size_t size() const { return n_; }
  T* begin() { return data_.get(); }
  T* end() { return data_.get() + n_; }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }

 private:
  static constexpr std::size_t kHugePage = 2u << 20;
  static T* allocate(std::size_t n) {
    const std::size_t bytes = (n ? n : 1) * sizeof(T);
    if (bytes >= kHugePage) {
      const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      if (void* p = std::aligned_alloc(kHugePage, rounded)) {
#ifdef MADV_HUGEPAGE
        madvise(p, rounded, MADV_HUGEPAGE);
#endif
        return static_cast<T*>(p);
      }
    }
    if (void* p = std::malloc(bytes)) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::size_t n_;
  std::unique_ptr<T, Free> data_;
};

}  // namespace bwsim
