#pragma once
// A CTA's shared memory: its dynamic allocation as real bytes. Both modes keep the bytes so that
// small control data (a TMEM address written by tcgen05.alloc, flags) works in timing mode too;
// timing mode skips only the bulk data movement of TMA and MMA.
//
// The image reads as zeros until written. It is a block of the CTA before (core/RecycledMemory:
// mapped already) or fresh zero pages; a reused block is cleared in at most 64 pieces as accesses
// first reach them, so a timing-mode CTA that writes a few words of its 228 KB clears a piece or
// two, not the whole image (a 1024-CTA attention run cleared 204 MB of reused images, evicting the
// host's caches as it went).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "bwsim/core/RecycledMemory.hpp"

namespace bwsim {

class Smem {
 public:
  explicit Smem(std::uint32_t size);
  std::uint32_t size() const { return size_; }
  bool in_bounds(std::uint64_t offset, std::uint64_t len) const { return offset + len <= size_; }
  // Caller checks in_bounds first.
  std::span<std::byte> bytes(std::uint32_t offset, std::uint32_t len) {
    if (cleared_ != kAll && len != 0) {
      const std::uint32_t first = offset >> piece_shift_, last = (offset + len - 1) >> piece_shift_;
      const std::uint64_t pieces = (kAll >> (63 - (last - first))) << first;
      if ((cleared_ & pieces) != pieces) clear(pieces & ~cleared_);
    }
    return {data_.get() + offset, len};
  }

 private:
  static constexpr std::uint64_t kAll = ~std::uint64_t{0};
  Smem(std::uint32_t size, recycled::Block block);
  void clear(std::uint64_t pieces);

  std::uint32_t size_;
  std::uint32_t piece_shift_;  // a piece is 2^piece_shift_ bytes: at most 64 cover the image
  std::uint64_t cleared_;      // a bit per piece: holds this CTA's bytes (cleared, or fresh zero pages)
  std::unique_ptr<std::byte, recycled::GiveBack> data_;
};

}  // namespace bwsim
