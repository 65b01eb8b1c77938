#pragma once
// A fixed-size array of zeroed trivial values. A block of the same size freed earlier on this
// thread is reused and cleared (core/RecycledMemory: its pages are mapped already); otherwise
// calloc hands out untouched zero pages, so a chip's TMEM cells or a global buffer of which a
// kernel writes a part fault in that part only (page faults dominate a short full-chip run).
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>

#include "bwsim/core/RecycledMemory.hpp"

namespace bwsim {

template <class T>
class ZeroedArray {
  static_assert(std::is_trivial_v<T>);

 public:
  explicit ZeroedArray(std::size_t n) : n_(n), data_(allocate(n), recycled::GiveBack{bytes(n)}) {}
  std::size_t size() const { return n_; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }

 private:
  static std::size_t bytes(std::size_t n) { return (n ? n : 1) * sizeof(T); }
  static T* allocate(std::size_t n) {
    const recycled::Block b = recycled::take_or_calloc(bytes(n));
    return static_cast<T*>(b.zeroed ? b.p : std::memset(b.p, 0, bytes(n)));
  }
  std::size_t n_;
  std::unique_ptr<T, recycled::GiveBack> data_;
};

}  // namespace bwsim
