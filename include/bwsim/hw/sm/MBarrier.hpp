#pragma once
// The mbarrier state machine of the PTX ISA: phase parity, pending arrivals, tx-count.
// A phase completes only when pending arrivals AND tx-count both reach zero; the pending count
// then resets to the init count. Pure state: the Cta turns outcomes into wake-ups and errors.
#include <cstdint>
#include <string>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

struct WarpState;

class MBarrier {
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

  std::string name;                 // for reports and traces, e.g. "full[2]"
  // Cluster visibility of the init: peers may use the barrier once a barrier.cluster phase
  // completed after the init with a release (the default arrive) or a fence.mbarrier_init.
  const WarpState* init_warp = nullptr;
  bool init_fenced = false;
  bool visible_to_cluster = false;
  WarpState* waiters = nullptr;     // intrusive list of blocked warps
  // Race checking: its happens-before object, and the phases completed by earlier inits (the
  // object counts phases across re-initialisations, so a phase's index is hb_base + phase).
  std::uint32_t hb_object = 0;
  std::uint32_t hb_base = 0;
  // The last operation that touched the barrier, for deadlock reports.
  const char* last_op = "init";
  int last_warp = -1;
  Cycle last_cycle = 0;

 private:
  Outcome settle();
  std::uint32_t offset_;
  Status status_ = Status::Uninitialized;
  std::uint64_t phase_ = 0;
  std::uint32_t expected_ = 0;
  std::uint32_t pending_ = 0;
  std::int64_t tx_ = 0;
};

}  // namespace bwsim
