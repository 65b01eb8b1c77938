#pragma once
// One SM's tensor memory: 128 lanes x tmem.columns 32-bit cells (real values in functional mode)
// and its column allocator. tcgen05.alloc hands out power-of-two column ranges (32 .. columns)
// aligned to their size; a request that does not fit waits, in order, for a dealloc.
#include <cstdint>
#include <span>
#include <vector>

#include "bwsim/core/Cycle.hpp"
#include "bwsim/core/ZeroedArray.hpp"

namespace bwsim {

class Cta;
struct WarpState;

inline constexpr std::uint32_t kTmemLanes = 128;
inline constexpr std::uint32_t kTmemGranule = 32;  // smallest allocation, in columns

// A TMEM address: lane in bits 16..31, column in bits 0..15 (PTX).
struct TmemAddr {
  std::uint32_t raw = 0;
  static constexpr TmemAddr at(std::uint32_t lane, std::uint32_t column) { return TmemAddr{(lane << 16) | column}; }
  constexpr std::uint32_t lane() const { return raw >> 16; }
  constexpr std::uint32_t column() const { return raw & 0xFFFFu; }
  constexpr TmemAddr operator+(std::uint32_t columns) const { return TmemAddr{raw + columns}; }
};

class Tmem {
 public:
  Tmem(std::uint32_t columns, bool holds_data);

  std::uint32_t columns() const { return columns_; }
  std::uint32_t free_columns() const;

  // Allocates `ncols` (already validated) for `cta` if they fit; returns the first column or -1.
  std::int64_t try_allocate(const Cta& cta, std::uint32_t ncols);
  // Frees [column, column + ncols); false if that range is not exactly owned by `cta`.
  bool release(const Cta& cta, std::uint32_t column, std::uint32_t ncols);
  // Whether every column of [column, column + ncols) is allocated to `cta`.
  bool owned_by(const Cta& cta, std::uint32_t column, std::uint32_t ncols) const;
  // Columns `cta` still holds.
  std::uint32_t held_by(const Cta& cta) const;
  // Changes with every allocation and release: an access checked against the same epoch is
  // still inside the same allocations.
  std::uint64_t epoch() const { return epoch_; }

  // Warps blocked in tcgen05.alloc, oldest first; dealloc retries them in order.
  void add_waiter(WarpState& ws);
  void remove_waiter(WarpState& ws);
  std::span<WarpState* const> waiters() const { return waiters_; }

  // Cell access (functional mode; callers have checked the range).
  std::uint32_t& cell(std::uint32_t lane, std::uint32_t column) { return cells_[lane * columns_ + column]; }
  bool holds_data() const { return cells_.size() > 1; }

 private:
  std::uint32_t columns_;
  std::vector<const Cta*> owner_;  // per 32-column granule
  // Functional mode's cells (lane-major), zero pages until touched (a kernel using a few columns
  // of a chip's 148 TMEMs faults in those only); a single unused cell in timing mode.
  ZeroedArray<std::uint32_t> cells_;
  std::vector<WarpState*> waiters_;
  std::uint64_t epoch_ = 0;
};

}  // namespace bwsim
