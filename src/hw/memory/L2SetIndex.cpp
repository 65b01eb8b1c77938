#include "bwsim/hw/memory/L2SetIndex.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "bwsim/core/Error.hpp"

namespace bwsim {

namespace {
// splitmix64's finalizer: a fixed, well-mixed function of its argument.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The rank over GF(2) of `vectors`.
std::uint32_t rank(const std::vector<std::uint32_t>& vectors) {
  std::uint32_t basis[32] = {};
  std::uint32_t r = 0;
  for (std::uint32_t v : vectors) {
    while (v != 0) {
      const int top = 31 - std::countl_zero(v);
      if (basis[top] == 0) {
        basis[top] = v;
        ++r;
        break;
      }
      v ^= basis[top];
    }
  }
  return r;
}

// Whether the in-page map (line bit j < set_bits to set bit j, bit set_bits + i to columns[i])
// sends a page's blocks onto every set for every power-of-two row pitch: a block's address has
// `zero_bits` zero bits from the pitch's bit on (its row is a multiple of the block's rows), and the
// other bits' images must still span the set bits (a linear map onto them is then even).
bool reaches_every_set(std::uint32_t set_bits, std::uint32_t page_line_bits, std::uint32_t zero_bits,
                       const std::vector<std::uint32_t>& columns) {
  for (std::uint32_t pitch_bit = 0; pitch_bit < page_line_bits; ++pitch_bit) {
    std::vector<std::uint32_t> images;
    for (std::uint32_t j = 0; j < page_line_bits; ++j) {
      if (j >= pitch_bit && j < pitch_bit + zero_bits) continue;
      images.push_back(j < set_bits ? 1u << j : columns[j - set_bits]);
    }
    if (rank(images) < set_bits) return false;
  }
  return true;
}
}  // namespace

L2SetIndex::L2SetIndex(std::uint32_t set_bits, std::uint32_t line_bytes, std::uint32_t block_rows, std::uint64_t page_bytes)
    : set_bits_(set_bits) {
  if (page_bytes == 0 || set_bits == 0) return;
  const std::uint64_t page_lines = page_bytes / std::max(1u, line_bytes);
  if (page_lines == 0 || !std::has_single_bit(page_lines) || set_bits > 31)
    throw ConfigError(fmt::format("l2.page_bytes: {} bytes is not a power-of-two number of {}-byte lines, or 2^{} sets "
                                  "are more than the index handles (2^31)",
                                  page_bytes, line_bytes, set_bits));
  page_line_bits_ = static_cast<std::uint32_t>(std::countr_zero(page_lines));
  const std::uint32_t zero_bits = static_cast<std::uint32_t>(std::countr_zero(std::max(1u, block_rows)));
  if (page_line_bits_ < set_bits + zero_bits)
    throw ConfigError(fmt::format(
        "l2.page_bytes: a page of {} lines has too few bits above the {} set bits for blocks of {} rows to reach "
        "every set (ask for more l2.ways or larger pages)",
        page_lines, set_bits, block_rows));
  // The first of a fixed sequence of pseudo-random maps that passes (51 tries for the H100's 10
  // set bits, 959 for the H200's 11, each a few dozen rank checks of at most 14 vectors).
  columns_.resize(page_line_bits_ - set_bits);
  std::uint64_t draw = 0;
  for (std::uint32_t attempt = 0; attempt < 100000; ++attempt) {
    for (std::uint32_t& c : columns_) c = static_cast<std::uint32_t>(mix(draw++)) & ((1u << set_bits) - 1);
    if (reaches_every_set(set_bits, page_line_bits_, zero_bits, columns_)) return;
  }
  throw ConfigError(fmt::format(
      "l2.page_bytes: no in-page hash reaches every one of 2^{} sets from blocks of {} rows (ask for more l2.ways, larger "
      "pages or fewer l2.block_rows)",
      set_bits, block_rows));
}

// The line address folded onto the set bits by XOR: a run of consecutive lines fills every set
// evenly (within each aligned run of 2^set_bits lines the fold only permutes the low bits), and lines
// a power of two apart (the rows of a tile) still spread over the sets.
std::uint64_t L2SetIndex::folded(std::uint64_t line) const {
  std::uint64_t h = 0;
  for (std::uint64_t x = line; x != 0; x >>= set_bits_) h ^= x;
  return h;
}

// The in-page line bits below the set bits as they are, those above through `columns_`, and the
// page's frame as a mixed function of its number.
std::uint64_t L2SetIndex::scattered(std::uint64_t line) const {
  const std::uint64_t in_page = line & ((std::uint64_t{1} << page_line_bits_) - 1);
  std::uint64_t h = in_page ^ mix(line >> page_line_bits_);
  for (std::uint64_t high = in_page >> set_bits_; high != 0; high &= high - 1) h ^= columns_[std::countr_zero(high)];
  return h;
}

std::uint64_t L2SetIndex::operator()(std::uint64_t line) const {
  if (set_bits_ == 0) return 0;
  return (page_line_bits_ == 0 ? folded(line) : scattered(line)) & ((std::uint64_t{1} << set_bits_) - 1);
}

}  // namespace bwsim
