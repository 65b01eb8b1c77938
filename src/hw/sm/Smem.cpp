#include "bwsim/hw/sm/Smem.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace bwsim {

namespace {
constexpr std::uint32_t kPieces = 64;
std::size_t block_bytes(std::uint32_t size) { return size ? size : 1; }
}  // namespace

Smem::Smem(std::uint32_t size)
    : size_(size),
      piece_(std::max<std::uint32_t>(1, (size + kPieces - 1) / kPieces)),
      cleared_(0),
      data_(nullptr, recycled::GiveBack{block_bytes(size)}) {
  bool zeroed = false;
  data_.reset(static_cast<std::byte*>(recycled::take_or_calloc(block_bytes(size), zeroed)));
  if (zeroed) cleared_ = ~std::uint64_t{0};
}

void Smem::clear(std::uint64_t pieces) {
  cleared_ |= pieces;
  while (pieces) {
    const auto first = static_cast<std::uint32_t>(std::countr_zero(pieces));
    const auto run = static_cast<std::uint32_t>(std::countr_one(pieces >> first));
    const std::uint32_t begin = first * piece_, end = std::min(size_, (first + run) * piece_);
    if (begin < end) std::memset(data_.get() + begin, 0, end - begin);
    pieces = run == 64 ? 0 : pieces & ~(((std::uint64_t{1} << run) - 1) << first);
  }
}

}  // namespace bwsim
