#pragma once
// A first-in first-out queue over a vector that keeps its storage: a pop advances a head, the
// storage is reused once the queue drains, and the popped front is dropped after kCompactAfter
// pops of a queue that never drains. No allocation per element once warm.
#include <cstddef>
#include <vector>

namespace bwsim {

template <class T>
class ReusedFifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  const T& front() const { return items_[head_]; }
  void push(const T& item) { items_.push_back(item); }
  void pop() {
    if (++head_ == items_.size()) {
      clear();
    } else if (head_ >= kCompactAfter) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }

 private:
  static constexpr std::size_t kCompactAfter = 256;
  std::vector<T> items_;
  std::size_t head_ = 0;
};

}  // namespace bwsim
