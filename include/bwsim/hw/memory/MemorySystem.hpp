#pragma once
// The memory below the SMs, shared by all of them: the L2 (residency and hit/miss by the config's
// l2.policy, its bandwidth to the SMs) and HBM (the config's hbm.model). Every TMA load, store and
// prefetch goes through it. The L2's bandwidth to the SMs is a link that requests reserve in the
// order they arrive (BandwidthLink), so many SMs streaming at once share its rate.
#include <cstdint>
#include <memory>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Stats.hpp"
#include "bwsim/core/Trace.hpp"
#include "bwsim/hw/memory/BandwidthLink.hpp"
#include "bwsim/hw/memory/HbmModel.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"
#include "bwsim/hw/memory/TensorMap.hpp"

namespace bwsim {

struct MemoryStats {
  std::uint64_t l2_read_bytes = 0;   // read by TMA loads (a multicast load once); prefetches only fill it
  std::uint64_t l2_hit_bytes = 0;    // of those, found in the L2
  std::uint64_t l2_coalesced_bytes = 0;  // of those, joined a transfer in flight (no link bandwidth)
  std::uint64_t l2_write_bytes = 0;  // written by TMA stores
  std::uint64_t hbm_read_bytes = 0;  // L2 misses filled from HBM (loads and prefetches)
  std::uint64_t hbm_write_bytes = 0; // stores written through to HBM
  Cycle l2_busy_cycles = 0, hbm_busy_cycles = 0;  // cycles each link spent moving bytes
  double l2_hit_rate() const {
    return l2_read_bytes ? static_cast<double>(l2_hit_bytes) / static_cast<double>(l2_read_bytes) : 0.0;
  }
  static const StatGroup<MemoryStats>& declared();  // "memory.*", one for the chip
};

// What a read found: when its data has left the L2, and how many of its bytes came from HBM.
struct MemoryRead {
  Cycle ready = 0;
  std::uint64_t miss_bytes = 0;
};

class MemorySystem {
 public:
  explicit MemorySystem(const HardwareConfig& config);

  // A new kernel launch: its clock starts at 0, so the links start idle and the statistics
  // empty; the L2 keeps its contents (a kernel finds what the previous one left there).
  // `tracer` (may be null) gets the achieved L2 and HBM bandwidth as counter tracks of process
  // `pid`, one value per window of kCounterWindow cycles.
  void begin_launch(Tracer* tracer, int pid);
  // The launch is over: the last window's counters are written.
  void end_launch();
  static constexpr Cycle kCounterWindow = 1000;  // display granularity of the counters, not hardware

  // A TMA load (or prefetch) of the box at `coords` whose request reaches the L2 at `at`:
  // returns the cycle its data has left the L2 for the SM (its misses filled from HBM first).
  MemoryRead read(const TensorMap& map, const TensorCoords& coords, Cycle at);
  // A TMA prefetch of the box to the L2 arriving at `at`: its misses are read from HBM; nothing
  // goes to an SM.
  void prefetch(const TensorMap& map, const TensorCoords& coords, Cycle at);
  // A TMA store of the box at `coords` (written to the L2 and through to HBM) arriving at `at`:
  // returns the cycle the L2 has taken the bytes.
  Cycle write(const TensorMap& map, const TensorCoords& coords, Cycle at);

  MemoryStats stats() const;

 private:
  // Bytes a link delivered, summed per counter window (deliveries come in cycle order per link).
  struct WindowCounter {
    const char* name;
    Cycle window = 0;
    std::uint64_t bytes = 0;
    void add(MemorySystem& m, Cycle at, std::uint64_t n);
    void flush(MemorySystem& m);
  };
  // The box's in-bounds bytes and how many of them miss in the L2 (touching its blocks).
  struct Lookup {
    std::uint64_t bytes, miss_bytes;
    std::uint64_t coalesced_bytes = 0;  // in blocks still in flight to another SM at the request
    Cycle coalesced_ready = 0;          // when the last of those arrives
    std::uint64_t promoted_miss_bytes = 0;  // fetched from HBM beside the box (its L2 promotion)
  };
  // With `at` and `fresh` (a read): blocks in flight at `at` are coalesced, the others' in-flight
  // fields are collected in `fresh` for the caller to set. `promote`: blocks of the map's L2
  // promotion granule beside the box are fetched too (loads and prefetches, not stores).
  Lookup lookup(const TensorMap& map, const TensorCoords& coords, bool promote, Cycle at = 0,
                std::vector<Cycle*>* fresh = nullptr);
  // Moves `bytes` between HBM and the L2 from `at` (and counts them for the trace).
  HbmAccess hbm_transfer(Cycle at, std::uint64_t bytes);
  // Touches the box's L2 blocks: returns (blocks, blocks that hit).
  struct Touched {
    std::uint32_t blocks = 0, hits = 0, coalesced = 0;
    std::uint32_t promoted_misses = 0;  // promotion blocks beside the box that missed
    Cycle coalesced_ready = 0;
  };
  Touched touch(const TensorMap& map, const TensorCoords& coords, bool promote, Cycle at, std::vector<Cycle*>* fresh);

  const HardwareConfig& config_;
  std::unique_ptr<L2Policy> l2_;
  std::unique_ptr<HbmModel> hbm_;
  BandwidthLink l2_link_, delivery_link_;
  MemoryStats stats_;
  std::vector<Cycle*> fresh_;  // a read's blocks that go over the link (reused, no allocation per read)
  // A box's block keys in touch order, whether each is a promotion block (1; kept only when the
  // map promotes), and what the L2 found (reused: no allocation per access).
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint8_t> promoted_;
  std::vector<L2Touch> touches_;
  Tracer* tracer_ = nullptr;
  int pid_ = 0;
  WindowCounter l2_counter_{"L2 -> SM GB/s"}, hbm_counter_{"HBM GB/s"};
};

}  // namespace bwsim
