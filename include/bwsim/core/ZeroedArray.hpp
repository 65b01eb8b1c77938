#pragma once
// A fixed-size array of zeroed trivial values that costs nothing until touched: calloc hands
// large blocks out as untouched zero pages, so a 228 KB SMEM image of which a kernel writes a few
// words faults in a few pages, not all of them (page faults dominate a short full-chip run).
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace bwsim {

template <class T>
class ZeroedArray {
  static_assert(std::is_trivial_v<T>);

 public:
  explicit ZeroedArray(std::size_t n) : n_(n), data_(static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)))) {
    if (!data_) throw std::bad_alloc();
  }
  std::size_t size() const { return n_; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::size_t n_;
  std::unique_ptr<T, Free> data_;
};

}  // namespace bwsim
