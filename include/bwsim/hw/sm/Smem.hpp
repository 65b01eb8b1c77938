#pragma once
// A CTA's shared memory: its dynamic allocation as real bytes. Both modes keep the bytes so that
// small control data (a TMEM address written by tcgen05.alloc, flags) works in timing mode too;
// timing mode skips only the bulk data movement of TMA and MMA.
#include <cstddef>
#include <cstdint>
#include <span>
#include "bwsim/core/ZeroedArray.hpp"

namespace bwsim {

class Smem {
 public:
  explicit Smem(std::uint32_t size) : size_(size), bytes_(size) {}
  std::uint32_t size() const { return size_; }
  bool in_bounds(std::uint64_t offset, std::uint64_t len) const { return offset + len <= size_; }
  // Caller checks in_bounds first.
  std::span<std::byte> bytes(std::uint32_t offset, std::uint32_t len) { return {bytes_.data() + offset, len}; }

 private:
  std::uint32_t size_;
  ZeroedArray<std::byte> bytes_;
};

}  // namespace bwsim
