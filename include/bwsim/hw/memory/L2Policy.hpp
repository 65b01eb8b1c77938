#pragma once
// Which parts of GMEM the L2 holds, for the hit/miss decision of every TMA access; config
// l2.policy chooses how it replaces blocks. Residency is tracked per block of l2.block_rows rows
// x one 128-byte line of a tensor (8 rows: 1 KiB): coarse enough to cost a handful of lookups per
// TMA box, fine enough that a tile read by one CTA and then by another hits. One policy per die's
// L2 half (hw/memory/MemorySystem).
#include <cstdint>
#include <memory>
#include <span>

#include "bwsim/core/Cycle.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/core/ModelRegistry.hpp"

namespace bwsim {

// A block's last transfer towards an SM: when it ends, to which SM, how long it waited at the L2
// (from its request to `until`), and whether it is a fill from HBM (a read that missed, or one
// that waited for such a fill).
struct L2InFlight {
  Cycle until = 0;
  std::uint32_t sm : 31 = 0;
  std::uint32_t fill : 1 = 0;
  std::uint32_t waited = 0;
};
static_assert(sizeof(L2InFlight) == 16);

// What touching one block found.
struct L2Touch {
  bool hit = false;
  L2InFlight last;                   // the block's last transfer (until 0 for a miss)
  L2InFlight* in_flight = nullptr;   // where the caller records a new transfer (valid until the next access)
};

class L2Policy {
 public:
  virtual ~L2Policy() = default;
  // Touches the blocks `keys` (their GMEM addresses) in order, one result each into `out`: a
  // missing block is brought in, evicting one when the L2 is full. One call per TMA box, so the
  // virtual call is paid per box and the per-block work stays inside the policy.
  virtual void access(std::span<const std::uint64_t> keys, std::span<L2Touch> out) = 0;
  virtual std::uint64_t resident_blocks() const = 0;
  // A new launch restarts the clock: no transfer is in flight any more.
  virtual void clear_in_flight() = 0;

  L2Touch access_one(std::uint64_t key) {
    L2Touch t;
    access({&key, 1}, {&t, 1});
    return t;
  }
};

// What the set-associative policies build their sets from (the others ignore it): l2.ways,
// l2.line_bytes (the unit of the keys), l2.block_rows and l2.page_bytes (hw/memory/L2SetIndex).
struct L2SetGeometry {
  std::uint32_t ways = 0;
  std::uint32_t line_bytes = 128;
  std::uint32_t block_rows = 8;
  std::uint64_t page_bytes = 0;
};

// "lru" (exact least-recently-used, the default), "clock" (second chance), "set_lru" and
// "set_rrip" (set-associative); the factory takes the capacity in blocks and the set geometry.
using L2PolicyRegistry = ModelRegistry<ConfigError, std::unique_ptr<L2Policy>, std::uint64_t, L2SetGeometry>;
const L2PolicyRegistry& l2_policies();

}  // namespace bwsim
