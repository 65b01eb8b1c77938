#pragma once
// A CTA's shared memory: its dynamic allocation as real bytes in functional mode, only a size
// in timing mode.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bwsim {

class Smem {
 public:
  Smem(std::uint32_t size, bool holds_data) : size_(size) {
    if (holds_data) bytes_.assign(size, std::byte{0});
  }
  std::uint32_t size() const { return size_; }
  bool holds_data() const { return !bytes_.empty() || size_ == 0; }
  bool in_bounds(std::uint64_t offset, std::uint64_t len) const { return offset + len <= size_; }
  // Caller checks in_bounds first; empty in timing mode.
  std::span<std::byte> bytes(std::uint32_t offset, std::uint32_t len) {
    if (bytes_.empty()) return {};
    return {bytes_.data() + offset, len};
  }

 private:
  std::uint32_t size_;
  std::vector<std::byte> bytes_;
};

}  // namespace bwsim
