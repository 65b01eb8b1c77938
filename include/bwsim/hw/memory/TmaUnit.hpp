#pragma once
// One SM's TMA unit: tiled tensor loads (GMEM -> SMEM, completing through complete_tx on an
// mbarrier; multicast into several CTAs of a cluster), stores (SMEM -> GMEM, tracked by the issuing warp's bulk async-groups) and L2
// prefetches. Requests stream through the unit one after another at tma.bytes_per_cycle, then
// take tma.load_latency / tma.store_latency to complete. Loads and stores wait for the unit in
// the order they reach it (a load once its CPC has room, so a store may pass a load the gate holds)
// and reach the L2 when the unit starts them: the L2 and HBM links serve requests in the order they
// arrive there, so a request the unit starts later must not take its place among other SMs'
// requests at the cycle it was issued. A prefetch takes no unit time and goes to the L2 at its issue.
#include <cstdint>
#include <vector>

#include "bwsim/core/ReusedFifo.hpp"
#include "bwsim/core/SlotPool.hpp"
#include "bwsim/hw/memory/WarpSharedPath.hpp"
#include "bwsim/core/Stats.hpp"
#include "bwsim/hw/sm/SimContext.hpp"
#include "bwsim/hw/memory/TensorCopy.hpp"
#include "bwsim/hw/memory/TensorMap.hpp"

namespace bwsim {

class Cta;
struct WarpState;

// Where a load lands: the cluster ranks whose SMEM receives the box (one bit each), and whether
// complete_tx goes to each destination's pair leader (cta_group::2) instead of the destination.
struct TmaDestinations {
  std::uint16_t ranks = 0;
  bool to_pair_leader = false;
};

struct TmaStats {
  std::uint64_t loads = 0, load_bytes = 0;    // requests and bytes read from L2 (once per multicast)
  std::uint64_t delivered_bytes = 0;          // bytes written into SMEM (once per destination CTA)
  std::uint64_t stores = 0, store_bytes = 0;  // bytes actually written (clipped)
  std::uint64_t reduces = 0, reduce_bytes = 0;  // reductions (.add) and the bytes they added (clipped)
  std::uint64_t gated_loads = 0;  // loads that waited for their CPC's room (l2.cpc_load_bytes_in_flight)
  Cycle gate_wait_cycles = 0;
  std::uint64_t prefetches = 0, prefetch_bytes = 0;
  Cycle busy_cycles = 0;  // cycles the unit spent streaming
  static const StatGroup<TmaStats>& declared();  // "tma.*", per SM
};

class TmaUnit {
 public:
  TmaUnit(SimContext& ctx, int sm_index);

  // Each is issued by `ws` at cycle `at` (the warp's issue clock); operands already validated.
  void load(Cta& cta, WarpState& ws, const TensorMap& map, const TensorCoords& coords, std::uint32_t smem,
            std::uint32_t barrier, TmaDestinations dests, Cycle at);
  // A store, or with GmemWrite::AddF32 a reduction (.add): its bytes leave at
  // tma.reduce_bytes_per_cycle and the L2 adds them (MemorySystem::reduce).
  void store(Cta& cta, WarpState& ws, const TensorMap& map, const TensorCoords& coords, std::uint32_t smem, Cycle at,
             GmemWrite how = GmemWrite::Copy);
  void prefetch(Cta& cta, WarpState& ws, const TensorMap& map, const TensorCoords& coords, Cycle at);

  const TmaStats& stats() const { return stats_; }

 private:
  enum class Kind : std::uint8_t { Load, Store };
  struct Request {
    Kind kind;
    Cta* cta;
    WarpState* warp;
    const TensorMap* map;
    TensorCoords coords;
    std::uint32_t smem;
    std::uint32_t barrier;
    TmaDestinations dests;
    std::uint64_t group;
    std::uint64_t id;
    Cycle issued;
    Cycle l2_taken;  // stores: when the L2 has taken the bytes
    Cycle unit_start;  // when the unit can start it if free (a load the CPC gate held: its admission)
    GmemWrite how;
    Cycle started = 0, unit_end = 0;  // stores: when the unit took it and finished reading it out
  };
  // When a request issued at `at` can start if the unit is free: issued, and the tensor map's
  // descriptor fetched (tma.descriptor_fetch_latency, the first time this launch uses it on this SM).
  Cycle ready_at(const TensorMap& map, Cycle at);
  // Request `slot` waits for the unit behind those before it.
  void take_turn(std::uint64_t slot);
  // Starts the waiting requests in order while each can start within tma.issue_cycles of now (a
  // request the unit takes at once, as when it is idle, goes without an event); for a later one
  // it schedules on_turn at the cycle the unit starts it.
  void serve();
  static void on_turn(void* unit, std::uint64_t);
  // Reserves the unit for `cycles` from `start` (when it is free); returns the stream's end.
  Cycle stream(Cycle start, Cycle cycles);
  static void on_load_done(void* unit, std::uint64_t slot);
  static void on_admitted(void* unit, std::uint64_t slot);
  // Sends load `slot` to the L2 from cycle `start` (the unit took it): schedules its landing.
  void send_load(std::uint64_t slot, Cycle start);
  // Sends store `slot` out from cycle `start` (the unit took it): schedules its SMEM read's end.
  void send_store(std::uint64_t slot, Cycle start);
  // Store `slot`'s bytes are through the SM's write path: its SMEM read ends once the L2 has
  // taken them too.
  static void on_store_sent(void* unit, std::uint64_t slot);
  static void on_store_read(void* unit, std::uint64_t slot);
  static void on_store_written(void* unit, std::uint64_t slot);
  void trace_request(const Request& r, const char* what, Cycle issue, Cycle start, Cycle end, Cycle done,
                     std::uint32_t bytes);

  SimContext& ctx_;
  int sm_;
  Cycle free_at_ = 0;
  ReusedFifo<std::uint64_t> waiting_;  // requests waiting for the unit, oldest first
  Cycle misses_done_ = 0;  // when the last box with L2 misses had its missed bytes in (0: none yet)
  std::uint64_t next_id_ = 0;
  std::vector<const TensorMap*> known_maps_;  // descriptors fetched this launch
  WarpSharedPath store_path_;  // the SM's write path towards the L2 (tma.store_bytes_per_cycle)
  SlotPool<Request> requests_;
  TmaStats stats_;
};

}  // namespace bwsim
