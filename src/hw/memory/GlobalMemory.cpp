#include "bwsim/hw/memory/GlobalMemory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bwsim/core/Error.hpp"

namespace bwsim {

GmemAddr GlobalMemory::alloc(std::uint64_t bytes) {
  if (holds_data_) {
    held_ += bytes;
    if (held_ > kMaxHeldBytes)
      throw InputError(fmt::format("functional mode holds every tensor in host memory: {:.1f} GiB asked for, at most {} "
                                   "GiB; run full-size problems in timing mode (without --functional)",
                                   static_cast<double>(held_) / (1ull << 30), kMaxHeldBytes >> 30));
  }
  if (page_bytes_ != 0 && bytes >= page_bytes_) next_ = (next_ + page_bytes_ - 1) / page_bytes_ * page_bytes_;
  buffers_.push_back(Buffer{next_, bytes, ZeroedArray<std::byte>(holds_data_ ? bytes : 0)});
  next_ += (bytes + 255) / 256 * 256 + 256;  // a gap keeps overruns out of the next buffer
  return GmemAddr{buffers_.back().base};
}

const GlobalMemory::Buffer* GlobalMemory::find(std::uint64_t addr, std::uint64_t len) const {
  auto it = std::upper_bound(buffers_.begin(), buffers_.end(), addr,
                             [](std::uint64_t a, const Buffer& b) { return a < b.base; });
  if (it == buffers_.begin()) return nullptr;
  --it;
  if (addr + len > it->base + it->size) return nullptr;
  return &*it;
}

bool GlobalMemory::contains(GmemAddr addr, std::uint64_t len) const { return find(addr.value, len) != nullptr; }

std::span<std::byte> GlobalMemory::bytes(GmemAddr addr, std::uint64_t len) {
  const Buffer* b = find(addr.value, len);
  if (!b) throw InputError(fmt::format("GMEM access [{:#x}, +{}) is outside every allocation", addr.value, len));
  if (!holds_data_) return {};
  auto* base = const_cast<std::byte*>(b->data.data());
  return {base + (addr.value - b->base), len};
}

}  // namespace bwsim
