#include "bwsim/hw/sm/Smem.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace bwsim {

namespace {
constexpr std::uint32_t kPieces = 64;
std::size_t block_bytes(std::uint32_t size) { return size ? size : 1; }
// The smallest power of two that 64 pieces of cover `size`.
std::uint32_t piece_shift(std::uint32_t size) {
  return static_cast<std::uint32_t>(std::bit_width(std::max<std::uint32_t>(1, (size + kPieces - 1) / kPieces) - 1));
}
}  // namespace

Smem::Smem(std::uint32_t size) : Smem(size, recycled::take_or_calloc(block_bytes(size))) {}

Smem::Smem(std::uint32_t size, recycled::Block block)
    : size_(size),
      piece_shift_(piece_shift(size)),
      cleared_(kAll),
      data_(static_cast<std::byte*>(block.p), recycled::GiveBack{block_bytes(size)}) {
  // A reused block: the pieces that cover the image are its last user's (those past the end hold
  // nothing to clear).
  const std::uint64_t used = (std::uint64_t{size} + (std::uint64_t{1} << piece_shift_) - 1) >> piece_shift_;
  if (!block.zeroed && used != 0) cleared_ = used == kPieces ? 0 : kAll << used;
}

void Smem::clear(std::uint64_t pieces) {
  cleared_ |= pieces;
  while (pieces) {
    const auto first = static_cast<std::uint32_t>(std::countr_zero(pieces));
    const auto run = static_cast<std::uint32_t>(std::countr_one(pieces >> first));
    const std::uint64_t begin = std::uint64_t{first} << piece_shift_;
    const std::uint64_t end = std::min<std::uint64_t>(size_, std::uint64_t{first + run} << piece_shift_);
    if (begin < end) std::memset(data_.get() + begin, 0, end - begin);
    pieces = run == kPieces ? 0 : pieces & ~(((std::uint64_t{1} << run) - 1) << first);
  }
}

}  // namespace bwsim
