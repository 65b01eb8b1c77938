#include "bwsim/hw/memory/L2SetAssociative.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace bwsim {

namespace {
std::uint32_t set_bits_for(std::uint64_t capacity_blocks, std::uint32_t ways) {
  const double sets = static_cast<double>(capacity_blocks) / std::max(1u, ways);
  return static_cast<std::uint32_t>(std::max(0.0, std::round(std::log2(std::max(1.0, sets)))));
}

// The 32-bit lanes of `x` that are zero, as their top bits (exact: no borrow crosses lanes).
std::uint64_t zero_lanes(std::uint64_t x) {
  constexpr std::uint64_t kLow = 0x7fffffff7fffffffull;
  return ~(((x & kLow) + kLow) | x | kLow);
}
}  // namespace

L2SetAssociative::L2SetAssociative(std::uint64_t capacity_blocks, const L2SetGeometry& geometry)
    : line_bytes_(std::max(1u, geometry.line_bytes)), set_bits_(set_bits_for(capacity_blocks, geometry.ways)),
      sets_(std::uint64_t{1} << set_bits_),
      set_of_(set_bits_, geometry.line_bytes, geometry.block_rows, geometry.page_bytes) {
  ways_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, capacity_blocks / sets_));
  stride_ = (ways_ + kTagsPerWord - 1) / kTagsPerWord * kTagsPerWord;
  tags_.assign(sets_ * stride_, kEmpty);
  in_flight_.resize(sets_ * stride_);
  for (std::uint64_t set = 0; set < sets_; ++set)
    std::fill(tags_.begin() + static_cast<std::ptrdiff_t>(set * stride_ + ways_),
              tags_.begin() + static_cast<std::ptrdiff_t>((set + 1) * stride_), kPadding);
}

// The line's bits above the set's, modulo 2^32 - 2, plus one (0 and 2^32 - 1 mark no block). With
// the set they name the line (either set index is the line's low bits XOR a function of these, the
// page's number and in-page bits above the set bits among them), so the tag is exact
// for lines less than 2^(32 + set bits) lines apart (512 GiB and more at 128-byte lines):
// GlobalMemory hands out one contiguous range, far smaller.
std::uint32_t L2SetAssociative::tag_of(std::uint64_t line) const {
  return static_cast<std::uint32_t>((line >> set_bits_) % (kPadding - 1) + 1);
}

// The way holding `tag` in the set at `first`, else its first empty way, else `first + ways_`:
// two tags a step, compared without a branch per way (a set's empty ways follow its valid ones).
std::size_t L2SetAssociative::find_way(std::size_t first, std::uint32_t tag) const {
  const std::uint64_t pattern = 0x0000000100000001ull * tag;
  for (std::size_t word = first; word < first + stride_; word += kTagsPerWord) {
    std::uint64_t lanes;
    std::memcpy(&lanes, &tags_[word], sizeof lanes);
    const std::uint64_t found = zero_lanes(lanes ^ pattern) | zero_lanes(lanes);
    if (found != 0) return word + static_cast<std::size_t>(std::countr_zero(found)) / 32;
  }
  return first + ways_;
}

L2SetAssociative::Slot L2SetAssociative::find(std::uint64_t key) const {
  const std::uint64_t line = line_of(key);
  const std::size_t first = set_of_(line) * stride_;
  const std::uint32_t tag = tag_of(line);
  const std::size_t way = find_way(first, tag);
  return Slot{first, way, tag, way != first + ways_ && tags_[way] == tag};
}

void L2SetAssociative::fill(const Slot& s, std::size_t way) {
  if (tags_[way] == kEmpty) ++resident_;
  tags_[way] = s.tag;
  in_flight_[way] = {};
}

void L2SetAssociative::clear_in_flight() { std::fill(in_flight_.begin(), in_flight_.end(), L2InFlight{}); }

}  // namespace bwsim
