#pragma once
// Storage for in-flight requests of a hardware unit, addressed by a small integer that travels
// in an event's argument. Freed slots are reused, so steady-state operation allocates nothing.
#include <cstdint>
#include <vector>

namespace bwsim {

template <class T>
class SlotPool {
 public:
  std::uint32_t put(const T& value) {
    if (free_.empty()) {
      items_.push_back(value);
      return static_cast<std::uint32_t>(items_.size() - 1);
    }
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    items_[slot] = value;
    return slot;
  }
  // A free slot whose item keeps what it held before (e.g. a vector's capacity), to fill in place.
  std::uint32_t acquire() {
    if (free_.empty()) {
      items_.emplace_back();
      return static_cast<std::uint32_t>(items_.size() - 1);
    }
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void release(std::uint64_t slot) { free_.push_back(static_cast<std::uint32_t>(slot)); }
  T& operator[](std::uint64_t slot) { return items_[slot]; }
  // Returns the value and frees its slot.
  T take(std::uint64_t slot) {
    free_.push_back(static_cast<std::uint32_t>(slot));
    return items_[slot];
  }

 private:
  std::vector<T> items_;
  std::vector<std::uint32_t> free_;
};

}  // namespace bwsim
