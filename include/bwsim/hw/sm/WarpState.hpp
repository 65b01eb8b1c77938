#pragma once
// The hardware's view of one resident warp: its clock, its coroutine, what it waits on,
// its bulk async-groups and its statistics. The kernel-facing handle is kernel/Warp.
#include <array>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "bwsim/core/Cycle.hpp"
#include "bwsim/check/HappensBefore.hpp"
#include "bwsim/check/RaceChecker.hpp"
#include "bwsim/hw/sm/BarrierWaitTally.hpp"
#include "bwsim/hw/sm/BulkGroups.hpp"
#include "bwsim/hw/tensor/sm100/MmaRepeat.hpp"
#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {

class Cta;
struct CoreBlockProfile;

enum class WaitKind : std::uint8_t {
  None,
  BarrierParity,   // mbarrier try_wait.parity loop
  BarrierToken,    // mbarrier try_wait with a state token
  NamedBarrier,    // bar.sync
  BulkGroups,      // cp.async.bulk.wait_group
  BulkGroupsRead,  // cp.async.bulk.wait_group.read
  Delay,           // compute / sleep / waiting for an own operation to land
  TmemAlloc,       // tcgen05.alloc waiting for free columns (or for the pair's partner)
  ClusterBarrier,  // barrier.cluster.wait
  RegisterPool,    // setmaxnreg.inc waiting for the CTA's pool
  CoreBlock,       // running a block of CUDA-core instructions on its sub-partition
};
const char* wait_kind_name(WaitKind k);

// Where a warp's cycles went: every cycle from its start to its finish is in exactly one.
enum class Activity : std::uint8_t {
  Issue,           // issue slots of its instructions
  Compute,         // modeled computation (advance) and sleeps
  MbarrierWait,    // blocked on mbarriers (per barrier in WarpState::barrier_wait)
  NamedBarrier,    // bar.sync
  ClusterBarrier,  // barrier.cluster.wait
  BulkGroups,      // cp.async.bulk.wait_group(.read)
  TmemAlloc,       // tcgen05.alloc (blocked and the allocation itself)
  TmemWait,        // tcgen05.wait::ld / wait::st
  Registers,       // setmaxnreg.inc
  Latency,         // own operations' latency: arrive-with-token, test_wait, DSMEM loads
  WgmmaWait,       // wgmma.wait_group
  kCount,
};
const char* activity_name(Activity a);
// Why a Delay wait (WaitKind::Delay, in wait_slot) waits: its activity.
inline constexpr std::uint32_t kDelaySleep = 0, kDelayTmem = 1, kDelayLatency = 2, kDelayWgmma = 3;

// Laid out for the host cache: the fields every resume, park and wait touches come first, in the
// first cache lines (a full-chip run switches warps every event, so each line a step touches is
// mostly a cache miss); the trace name, statistics and per-feature state follow.
struct alignas(64) WarpState {
  // Line 0: what a walk of a barrier's waiters reads of each (Cta::phase_completed,
  // settle_passed_ahead, add_waiter), besides the clock and the wait.
  Cta* cta = nullptr;
  // The warp's issue clock: always >= engine.now() while the warp runs. Operations that do
  // not block advance it by their issue cost; a blocking wait first lets the engine catch up.
  Cycle ready = 0;
  WaitKind wait = WaitKind::None;
  bool done = false;
  bool registered = false;  // parked on a barrier/group list, not just syncing its clock
  bool passed_ahead = false;  // listed on an mbarrier whose wait it passes at its cycle (Cta::register_ahead)
  std::uint32_t wait_slot = 0;   // barrier offset, named barrier id
  std::uint64_t wait_value = 0;  // parity, token phase, group count
  WarpState* next_waiter = nullptr;
  // An mbarrier wait's place among its barrier's waiters: when it began waiting and the engine
  // sequence number of that moment. A wait parked before the warp's clock reached it is listed at
  // once with the cycle and sequence number of the clock catch-up it then skips (Cta::park).
  Cycle registered_at = 0;
  std::uint64_t registered_seq = 0;
  std::uint32_t index = 0;
  std::uint32_t trace_tid = 0;  // its track in the SM's trace process (see kWarpTracksPerCta)

  // Line 1: the rest of a park and resume, and the tcgen05 completions a wait reads.
  std::coroutine_handle<> handle;
  Cycle wait_since = 0;
  Cycle issue_cycles = 0;  // Activity::Issue, which most steps add to (see activity_totals)
  std::uint64_t resume_token = 0;  // names the resume a pass listed ahead scheduled (0: any other resume)
  // tcgen05: completion of this warp's async MMA/cp (what tcgen05.commit waits for) and of its
  // outstanding tcgen05.ld / st (what wait::ld / wait::st wait for).
  Cycle tcgen05_done = 0;
  Cycle tmem_ld_done = 0;
  Cycle tmem_st_done = 0;
  std::uint64_t instructions = 0;  // statistics every resume adds to, as barrier_wait and other_activity below

  // Cycles blocked per mbarrier (its first entries: line 2), which also make up
  // Activity::MbarrierWait: a resume from an mbarrier wait touches lines 0 to 2 only.
  alignas(64) BarrierWaitTally barrier_wait;
  // Where the warp's cycles went (Activity), but Issue (issue_cycles) and the mbarrier waits
  // (barrier_wait, Cta::on_resume): account() adds, activity_totals() has them all.
  std::array<Cycle, static_cast<std::size_t>(Activity::kCount)> other_activity{};
  void account(Activity a, Cycle cycles) {
    if (a == Activity::Issue) issue_cycles += cycles;
    else other_activity[static_cast<std::size_t>(a)] += cycles;
  }
  std::array<Cycle, static_cast<std::size_t>(Activity::kCount)> activity_totals() const {
    auto totals = other_activity;
    totals[static_cast<std::size_t>(Activity::Issue)] = issue_cycles;
    totals[static_cast<std::size_t>(Activity::MbarrierWait)] += barrier_wait.total();
    return totals;
  }
  const CoreBlockProfile* block = nullptr;  // WaitKind::CoreBlock: the block

  std::uint64_t token_result = 0;  // phase returned by the last arrive-with-token
  // Race checking, from here to `bulk`: the checks' state, which they may keep on another thread
  // (SimContext::race_check), so it starts a host cache line of its own.
  alignas(64) HbWarp hb;  // what this warp knows happened before it (check/HappensBefore)
  // Copies of `cta` and of the TMEM lane quadrant (index % 4) for the checks: on another thread
  // they must not read line 0, which the simulation writes at every step (a read there costs the
  // simulation's next write a transfer of the line between the cores).
  const Cta* cta_for_checks = nullptr;
  std::uint32_t lane_quadrant = 0;
  // Race checking: recent records of this warp, by key hash (kind << 28 | position + 1, 0: none),
  // checked against the record itself; this line is warm while the warp runs, the CTA's index is not.
  std::array<std::uint32_t, 64> race_record_cache{};
  // Race checking: this warp's last two tcgen05.mma operand-read records in a CTA (position + 1
  // in its records, 0: none), which the next operand reads may extend; one entry per CTA of a pair
  // (by rank parity: a cta_group::2 MMA reads both), for the SMEM operands ([0]) and for an A
  // operand read from TMEM ([1]).
  struct OperandRecords {
    const Cta* cta = nullptr;
    std::array<std::uint32_t, 2> positions{};
  };
  std::array<std::array<OperandRecords, 2>, 2> operand_records{};
  // Race checking: the accumulator columns whose tcgen05.mma check this warp passed last in a CTA
  // (by rank parity), and the generation of that CTA's TMEM access records it passed against.
  struct AccumulatorCheck {
    const Cta* cta = nullptr;
    std::uint32_t begin = 0, end = 0;
    std::uint64_t generation = 0;
    bool operator==(const AccumulatorCheck&) const = default;
  };
  std::array<AccumulatorCheck, 2> accumulator_checked{};
  // Race checking: this warp's records in its CTA that wait for its own later step to be done (a
  // tcgen05.ld for wait::ld, a tcgen05.st for wait::st, an st.shared for fence.proxy.async, a
  // wgmma read for the wait_group retiring it), one entry per record, so that step visits these
  // instead of scanning every record of the kind (most of them other warps', and cold).
  struct UndoneRecord {
    AccessKind kind;
    std::uint32_t position;
  };
  std::vector<UndoneRecord> undone_records;

  alignas(64) BulkGroups bulk;

  // barrier.cluster: arrived and not yet waited, and the cluster phase the arrival belongs to.
  bool cluster_arrived = false;
  bool cluster_arrive_release = false;  // the last arrive was .release (it publishes mbarrier inits)
  std::uint64_t cluster_arrive_phase = 0;

  // The last instruction descriptor this warp's tcgen05.mma decoded without error, and its fields:
  // a kernel issues the same few descriptors over and over.
  struct DecodedMma {
    MmaKind kind = MmaKind::F16;
    std::uint32_t raw = 0;
    bool valid = false;
    InstrDescriptorFields fields;
  } last_mma_decoded;
  MmaRepeat mma_repeat;  // its last plain MMAs, for the next of their K loops
  bool pair_alloc = false;  // the pending tcgen05.alloc is cta_group::2
  // tcgen05.ld results not yet delivered (functional mode): the destination registers hold
  // poison until tcgen05.wait::ld copies these values in, as they are undefined before it.
  struct PendingLoad {
    std::uint32_t* dst;
    std::uint32_t count;
  };
  std::vector<PendingLoad> ld_pending;
  std::vector<std::uint32_t> ld_values;

  // wgmma (SM90): instructions issued; whether a group is open and when its instructions' last
  // accumulator lands; committed groups' completion cycles not yet retired by wait_group (oldest
  // first); groups committed and retired so far; wgmma.fence count; accumulator registers held.
  std::uint64_t wgmma_issued = 0;
  bool wgmma_open = false;
  Cycle wgmma_open_done = 0;
  std::deque<Cycle> wgmma_pending;
  std::uint64_t wgmma_committed = 0, wgmma_retired = 0;
  std::uint64_t wgmma_fences = 0;
  std::uint32_t accumulator_registers = 0;

  std::uint32_t registers = 0;        // per thread (launch value, then setmaxnreg)
  std::uint32_t setmaxnreg_count = 0; // setmaxnreg instructions executed (the warpgroup's round)

  // Statistics.
  Cycle start = 0;
  Cycle finish = 0;
  std::string role;  // set by the kernel; names the trace track
};

}  // namespace bwsim
