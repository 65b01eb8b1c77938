#pragma once
// The mbarrier state machine of the PTX ISA: phase parity, pending arrivals, tx-count.
// A phase completes only when pending arrivals AND tx-count both reach zero; the pending count
// then resets to the init count. Pure state: the Cta turns outcomes into wake-ups and errors.
#include <cstdint>
#include <string>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

struct WarpState;

// Laid out for the host cache: the state every arrival, wait and landing reads or writes (phase,
// counts, waiters, the last operation, the race checks' object and phase base) fills the first
// 64-byte line; the name and the init's cluster visibility, which peers' operations read, the
// second. A full-chip run comes back to a barrier only after many other events, so each line it
// touches is mostly a host cache miss.
class alignas(64) MBarrier {
 public:
  enum class Status : std::uint8_t { Uninitialized, Live, Invalidated };
  enum class Outcome : std::uint8_t { Pending, PhaseCompleted, OverArrival, TxOutOfRange, TxUnderflow };
  static constexpr std::int64_t kTxLimit = (1 << 20) - 1;
  static constexpr std::uint32_t kMaxCount = (1u << 20) - 1;

  explicit MBarrier(std::uint32_t offset) : offset_(offset) {}

  void init(std::uint32_t count);
  void invalidate() { status_ = Status::Invalidated; }
  // arrive(count) with an optional expect_tx(tx_bytes) applied first (arrive.expect_tx).
  Outcome arrive(std::uint32_t count, std::uint32_t tx_bytes = 0);
  Outcome expect_tx(std::uint32_t bytes);
  Outcome complete_tx(std::uint32_t bytes);

  std::uint32_t offset() const { return offset_; }
  Status status() const { return status_; }
  std::uint64_t phase() const { return phase_; }  // completed phases since init
  std::uint32_t parity() const { return static_cast<std::uint32_t>(phase_ & 1); }
  std::uint32_t expected() const { return expected_; }
  std::uint32_t pending() const { return pending_; }
  std::int64_t tx() const { return tx_; }
  // try_wait.parity(p): true once the phase with parity p has completed (current parity != p).
  bool parity_completed(std::uint32_t p) const { return parity() != (p & 1); }

 private:
  Outcome settle();
  std::uint32_t offset_;
  Status status_ = Status::Uninitialized;

 public:
  // The last operation that touched the barrier, for deadlock reports (with last_op, last_cycle).
  std::int16_t last_warp = -1;

 private:
  std::uint64_t phase_ = 0;
  std::uint32_t expected_ = 0;
  std::uint32_t pending_ = 0;
  std::int64_t tx_ = 0;

 public:
  WarpState* waiters = nullptr;     // intrusive list of blocked warps
  const char* last_op = "init";
  Cycle last_cycle = 0;
  // Race checking: its happens-before object, and the phases completed by earlier inits (the
  // object counts phases across re-initialisations, so a phase's index is hb_base + phase).
  std::uint32_t hb_object = 0;
  std::uint32_t hb_base = 0;
  // Cluster visibility of the init: peers may use the barrier once a barrier.cluster phase
  // completed after the init with a release (the default arrive) or a fence.mbarrier_init.
  bool init_fenced = false;
  bool visible_to_cluster = false;
  const WarpState* init_warp = nullptr;
  std::string name;                 // for reports and traces, e.g. "full[2]"
};
static_assert(sizeof(MBarrier) == 128, "two host cache lines: the state (first), the name and init (second)");

}  // namespace bwsim
