#pragma once
// The SM's write path for TMA stores: `bytes_per_cycle` shared equally by the warps that have
// bytes in it, each warp's stores one after another (ours: h200_epilogue.csv "store_order_*": one
// warp's back-to-back 8 KiB stores leave 259 cycles apart, in order; two warps' stores issued
// together leave together, each at half the rate). A store's bytes are through when its share has
// moved them; the path then calls `done(owner, slot)` from an event at that cycle. The shares
// change only when a store enters or leaves, so it costs one event per store (stale ones are
// dropped by a generation count), not one per byte.
#include <cstdint>
#include <vector>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

class Engine;

class WarpSharedPath {
 public:
  using DoneFn = void (*)(void* owner, std::uint64_t slot);
  WarpSharedPath(Engine& engine, double bytes_per_cycle, DoneFn done, void* owner)
      : engine_(engine), bytes_per_cycle_(bytes_per_cycle), done_(done), owner_(owner) {}
  WarpSharedPath(const WarpSharedPath&) = delete;
  WarpSharedPath& operator=(const WarpSharedPath&) = delete;

  // Store `slot` of warp `warp` (any key that tells warps apart) enters with `bytes` at cycle `at`
  // (no earlier than the last entry's; at most a few cycles after the engine's now).
  void add(Cycle at, const void* warp, std::uint64_t slot, double bytes);
  std::size_t in_flight() const { return stores_.size(); }

 private:
  struct Store {
    const void* warp;
    std::uint64_t slot;
    double left;  // bytes not yet through
  };
  void advance(Cycle to);  // moves every warp's first store's bytes on to `to`
  bool first_of_its_warp(std::size_t i) const;
  std::size_t active_warps() const;
  void plan();  // schedules the next store's end
  static void on_done(void* self, std::uint64_t generation);

  Engine& engine_;
  double bytes_per_cycle_;
  DoneFn done_;
  void* owner_;
  std::vector<Store> stores_;  // in the order they entered
  std::vector<std::uint8_t> leaves_;        // on_done's scratch: which stores are through
  std::vector<std::uint64_t> through_;      // on_done's scratch: their slots
  Cycle updated_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace bwsim
