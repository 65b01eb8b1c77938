#pragma once
// The memory below the SMs, shared by all of them: the L2 (residency and hit/miss by the config's
// l2.policy, its bandwidth to the SMs) and HBM (the config's hbm.model). Every TMA load, store and
// prefetch goes through it. The L2's bandwidth to the SMs is a link that requests reserve in the
// order they arrive (BandwidthLink), so many SMs streaming at once share its rate.
//
// On a chip of two dies (config dies) each die has its half: an L2 of half the capacity and
// bandwidth and half the HBM stacks. Every address has a home die (its HBM stacks, and the L2
// half that is its point of coherence). A die's L2 half also caches what its own SMs read (as
// each L2 partition of an A100/H100 does, and as B200's near-L2 latency up to one half's
// footprint shows): a read looks in the near half first; a near miss of an address homed on the
// other die is served by that die's half (a far hit, or a miss filled from that die's HBM) over
// the die-to-die link of that direction, paying dies.link_latency; a box with such far hits pays
// dies.far_hit_latency too, at the SM's TMA unit (TmaUnit); a far read whose map's L2 promotion is
// wider than a line also reserves dies.promotion_request_share of its bytes on the link the other
// way, without waiting for them. Writes go to the home half.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Stats.hpp"
#include "bwsim/core/Trace.hpp"
#include "bwsim/hw/memory/BandwidthLink.hpp"
#include "bwsim/hw/memory/CpcLoadGate.hpp"
#include "bwsim/hw/memory/GpcJoinTable.hpp"
#include "bwsim/hw/memory/HbmModel.hpp"
#include "bwsim/hw/memory/L2Policy.hpp"
#include "bwsim/hw/memory/TensorMap.hpp"

namespace bwsim {

struct MemoryStats {
  std::uint64_t l2_read_bytes = 0;   // read by TMA loads (a multicast load once); prefetches only fill it
  std::uint64_t l2_hit_bytes = 0;    // of those, found in the L2
  std::uint64_t l2_coalesced_bytes = 0;  // of those, joined a transfer in flight (no link bandwidth)
  std::uint64_t l2_write_bytes = 0;  // written by TMA stores
  std::uint64_t l2_reduce_bytes = 0; // added by TMA reductions (cp.reduce.async.bulk .add)
  std::uint64_t hbm_read_bytes = 0;  // L2 misses filled from HBM (loads and prefetches)
  std::uint64_t hbm_write_bytes = 0; // write-backs: of the lines stores and reductions allocated in place of others
  std::uint64_t d2d_bytes = 0;       // bytes that crossed between the dies (reads, writes, promotions' traffic back)
  // Cycles each link spent moving bytes (of two die halves or directions, the busier one).
  Cycle l2_busy_cycles = 0, hbm_busy_cycles = 0, d2d_busy_cycles = 0;
  double l2_hit_rate() const {
    return l2_read_bytes ? static_cast<double>(l2_hit_bytes) / static_cast<double>(l2_read_bytes) : 0.0;
  }
  static const StatGroup<MemoryStats>& declared();  // "memory.*", one for the chip
};

// What a read found: when its data has left the L2, and how many of its bytes came from HBM.
struct MemoryRead {
  Cycle ready = 0;
  std::uint64_t miss_bytes = 0;
  bool far_hits = false;  // some of its lines were found only in the other half's L2 (dies.far_hit_latency)
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

  // A TMA load of the box at `coords` by SM `sm` whose request reaches the L2 at `at`: returns
  // the cycle its data has left the L2 for the SM (its misses filled from HBM first).
  MemoryRead read(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at);
  // A TMA prefetch of the box by SM `sm` to the L2 arriving at `at`: its misses are read from
  // HBM; nothing goes to an SM.
  void prefetch(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at);
  // A TMA store of the box at `coords` by SM `sm` (into the L2, write-back with write-allocate) arriving
  // at `at`: returns the cycle the L2 has taken the bytes.
  Cycle write(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at);
  // A TMA reduction (.add) of the box into GMEM: each byte takes l2.reduce_link_cost array bytes
  // (read, add, write of the line); a line not in the L2 is read from HBM first (the add waits for
  // it) and written back. A resident line stays dirty in the L2: its eventual write-back is not
  // modeled. Returns the cycle the L2 has done the adds.
  Cycle reduce(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at);

  MemoryStats stats() const;
  // The loads each CPC may have in flight (l2.cpc_load_bytes_in_flight): TMA units ask it before
  // a load goes to the L2 and tell it when the load has landed.
  CpcLoadGate& load_gate() { return load_gate_; }

 private:
  // The public constructor's body, given the chip's layout (built once).
  MemorySystem(const HardwareConfig& config, const ChipLayout& layout);
  // Bytes a link delivered, summed per counter window (deliveries come in cycle order per link).
  struct WindowCounter {
    const char* name;
    Cycle window = 0;
    std::uint64_t bytes = 0;
    void add(MemorySystem& m, Cycle at, std::uint64_t n);
    void flush(MemorySystem& m);
  };
  static constexpr std::uint32_t kMaxDies = 2;
  // The home die of GMEM address `key`: the parity of its dies.interleave_bytes granules' index
  // bits (an XOR hash, so strided tiles do not all land on one die).
  std::uint32_t home(std::uint64_t key) const;
  // One die's L2 half and HBM stacks.
  struct Half {
    std::unique_ptr<L2Policy> l2;
    std::unique_ptr<HbmModel> hbm;
    BandwidthLink l2_link, delivery_link;
  };
  // What a box found in the half that served it: its in-bounds bytes there and how many missed.
  struct Part {
    std::uint64_t bytes = 0, miss_bytes = 0;
    std::uint64_t coalesced_bytes = 0;      // in blocks still in flight to another SM at the request
    std::uint64_t promoted_miss_bytes = 0;  // fetched from HBM beside the box (its L2 promotion)
  };
  struct Lookup {
    std::uint64_t bytes = 0;
    std::array<Part, kMaxDies> part{};  // by the die whose half served them
    Cycle coalesced_ready = 0;          // when the last coalesced block arrives
  };
  // An access by an SM of die `die`. With `at` and `fresh` (a read by SM `sm`): blocks in flight
  // at `at` to another SM are coalesced, the others' in-flight fields are collected in `fresh`
  // for the caller to set. Reads and prefetches also fetch the blocks of the map's L2 promotion
  // granule beside the box; a write goes to each block's home half.
  Lookup lookup(std::uint32_t die, const TensorMap& map, const TensorCoords& coords, bool write, Cycle at = 0,
                std::vector<L2InFlight*>* fresh = nullptr, std::uint32_t sm = 0);
  // The array bytes that filling `bytes` from HBM takes (l2.fill_link_cost each).
  std::uint64_t fill_array_bytes(std::uint64_t bytes) const {
    return static_cast<std::uint64_t>(static_cast<double>(bytes) * config_.l2.fill_link_cost);
  }
  // Moves `bytes` between die `home`'s HBM and its L2 half from `at` (and counts them for the trace).
  HbmAccess hbm_transfer(std::uint32_t home, Cycle at, std::uint64_t bytes);
  // Moves `bytes` over the die-to-die link from die `from` to the other, arriving at `at`: the
  // cycle they are across.
  Cycle cross(std::uint32_t from, Cycle at, std::uint64_t bytes);
  // Touches the box's L2 blocks (near half, then the home half where it is the other): per
  // serving half, the blocks and those that hit.
  struct Counts {
    std::uint32_t blocks = 0, hits = 0, coalesced = 0;
    std::uint32_t promoted_misses = 0;  // promotion blocks beside the box that missed
  };
  struct Touched {
    std::array<Counts, kMaxDies> served{};  // by the die whose half served the blocks
    Cycle coalesced_ready = 0;
    std::uint32_t blocks() const { return served[0].blocks + served[1].blocks; }
  };
  // Whether a read at `at` joins the transfer `last` in flight to another SM (l2.join_window_cycles).
  bool joinable(const L2InFlight& last, Cycle at) const;
  Touched touch(std::uint32_t die, const TensorMap& map, const TensorCoords& coords, bool write, Cycle at,
                std::vector<L2InFlight*>* fresh, std::uint32_t sm);

  const HardwareConfig& config_;
  std::vector<Half> halves_;          // one per die
  std::vector<BandwidthLink> links_;  // the die-to-die link from die d to the other (two dies)
  std::vector<std::uint8_t> sm_die_;   // the die of each SM
  std::vector<std::uint32_t> sm_gpc_;  // the GPC of each SM
  // log2(l2.line_bytes) where that is a power of two (every shipped config), else 0: a line's
  // number per key is a shift, not a 64-bit division (tens of cycles each on the host).
  unsigned line_shift_ = 0;
  std::uint64_t line_number(std::uint64_t address) const {
    return line_shift_ ? address >> line_shift_ : address / config_.l2.line_bytes;
  }
  std::unique_ptr<GpcJoinTable> gpc_joins_;  // with l2.join_scope gpc
  CpcLoadGate load_gate_;
  MemoryStats stats_;
  std::vector<L2InFlight*> fresh_;  // a read's blocks that go over the link (reused, no allocation per read)
  // A box's block keys in touch order, whether each is a promotion block (1; kept only when the
  // map promotes), and what the L2 found (reused: no allocation per access).
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint8_t> promoted_;
  std::vector<L2Touch> touches_;
  // With two dies: the half serving each block, and the blocks looked up in the far half (their
  // keys, positions in keys_ and results).
  std::vector<std::uint8_t> served_by_;
  std::vector<std::uint64_t> far_keys_;
  std::vector<std::uint32_t> far_index_;
  std::vector<L2Touch> far_touches_;
  std::vector<std::uint64_t> near_keys_;  // the keys the reader's half looks up when some go to the home only
  std::vector<std::uint32_t> near_index_;
  std::vector<L2Touch> near_touches_;
  Tracer* tracer_ = nullptr;
  int pid_ = 0;
  WindowCounter l2_counter_{"L2 -> SM GB/s"}, hbm_counter_{"HBM GB/s"}, d2d_counter_{"die-to-die GB/s"};
};

}  // namespace bwsim
