#pragma once
// Asynchronous-race detection (functional and timing mode alike). Every asynchronous access to a
// CTA's SMEM or TMEM is recorded with the warp that issued it; a conflicting later access must be
// ordered after it by happens-before (check/HappensBefore: vector clocks over every warp and
// synchronisation object of the cluster, followed through any chain of arrivals and waits, bar.sync,
// barrier.cluster and remote arrivals), not by timing:
//   - a TMA load once its complete_tx landed in phase p of a barrier and phase p is ordered before
//     the reader;
//   - an MMA (operand reads, accumulator writes) once a later tcgen05.commit of its warp is;
//   - a tcgen05.ld once its warp passed tcgen05.wait::ld and then made a release that is;
//   - a wgmma's operand reads once its warp passed the wgmma.wait_group that retires them and
//     then made a release that is;
//   - a generic ld.shared once its warp then made a release that is;
//   - a generic st.shared is visible to the async proxy (TMA store, MMA) after its warp's
//     fence.proxy.async.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Cycle.hpp"
#include "bwsim/check/HappensBefore.hpp"

namespace bwsim {

class Cta;
struct WarpState;

// TMEM accesses of warps (TmemLoad, TmemStore) touch their own lane quadrant (warp index % 4);
// an MMA's (MmaWrite, MmaTmemRead: a TS-form A operand) every lane.
enum class AccessKind : std::uint8_t {
  TmaWrite, MmaRead, MmaWrite, TmemLoad, GenericWrite, WgmmaRead, GenericRead, TmemStore, MmaTmemRead
};

// Ordered so that it fills one 64-byte host cache line (the 8-byte fields first): a check reads
// a few records per access, and with 148 SMs' CTAs taking turns they are mostly not in cache.
struct alignas(64) AsyncAccess {
  WarpState* issuer = nullptr;
  const WarpState* ordered_for = nullptr;  // the last warp found ordered after it (a cache)
  Cycle cycle = 0;
  std::uint64_t group = 0;  // WgmmaRead: 1 + the issuer's commit group
  HbPhase landing;          // TmaWrite: the barrier phase its complete_tx landed in
  std::uint32_t begin = 0, end = 0;  // SMEM bytes or TMEM columns
  HbClock seq = 0;  // issuer's releases (MmaRead, MmaWrite: commits) issued before the access
  HbClock done_seq = 0;   // TmemLoad, TmemStore, WgmmaRead: the issuer's releases at its wait::ld / wait::st / wait_group
  AccessKind kind = AccessKind::TmaWrite;
  bool done = true;       // TmaWrite: landed; TmemLoad / TmemStore: waited; GenericWrite: fenced; WgmmaRead: retired
  bool read_unwritten = false;  // TmemLoad of columns no recorded MMA had written yet
};
static_assert(sizeof(AsyncAccess) == 64);

inline constexpr std::size_t kAccessKinds = static_cast<std::size_t>(AccessKind::MmaTmemRead) + 1;

// A CTA's records: one per (kind, issuer, range), the latest access (record() replaces it in
// place), never removed while the CTA lives. They are kept per kind, since every check asks for
// one or two kinds only, found by key through a flat open-addressing index (one probe of one
// cache line on a warp's steady cycle, where a node-based map chased pointers), and by range
// through a per-kind list sorted by start (a check visits the records its range overlaps, not
// every stage and accumulator of the CTA).
class RaceRecords {
 public:
  std::vector<AsyncAccess>& of(AccessKind k) { return of_[static_cast<std::size_t>(k)]; }
  // The record of (kind, issuer, range): its position in of(kind), and whether it is new (then
  // the caller appends it at that position).
  // `lanes`: the TMEM lane quadrants the access touches, a bit each (kAllLanes for SMEM and MMAs).
  std::pair<std::uint32_t, bool> find_or_add(AccessKind kind, const WarpState* issuer, std::uint32_t begin,
                                             std::uint32_t end, std::uint32_t lanes);
  static constexpr std::uint32_t kAllLanes = 0xf;
  // Counts the changes to the records of `kind` that can make a check fail that passed (a record
  // added or replaced by a newer access): a check that passed against the same records and range
  // still passes, since ordering only ever becomes true.
  std::uint64_t generation(AccessKind k) const { return generation_[static_cast<std::size_t>(k)]; }
  void changed(AccessKind k) { ++generation_[static_cast<std::size_t>(k)]; }
  // Record `position` of `kind` now ends at `end` (no earlier than before); it keeps its key.
  void widen(AccessKind kind, std::uint32_t position, std::uint32_t end);
  // (kind, begin, end) in one word: a record's key with its issuer.
  static std::uint64_t range_key(AccessKind kind, std::uint32_t begin, std::uint32_t end) {
    return (static_cast<std::uint64_t>(kind) << 60) | (static_cast<std::uint64_t>(begin) << 30) | end;
  }
  // The records of `kinds` whose range overlaps [begin, end) and whose lanes meet `lanes`: kind
  // by kind, each by start (then age). Valid until the next call or the next record added.
  std::span<AsyncAccess* const> overlapping(std::initializer_list<AccessKind> kinds, std::uint32_t begin,
                                            std::uint32_t end, std::uint32_t lanes = kAllLanes);

 private:
  struct Slot {
    const WarpState* issuer = nullptr;  // nullptr: empty
    std::uint64_t range = 0;            // kind, begin, end packed
    std::uint32_t position = 0;
  };
  std::size_t home(const WarpState* issuer, std::uint64_t range) const {
    return static_cast<std::size_t>(mix64(reinterpret_cast<std::uintptr_t>(issuer) ^ mix64(range))) & (slots_.size() - 1);
  }
  void grow();

  // A record's range and TMEM lane quadrants beside its position, so a check skips the records of
  // other lanes, and those ending before its range, in this compact list, without reading them
  // (each a cold host cache line). `end` is the furthest the record has reached (widen), so it
  // may exceed the record's own after a newer access of the same key: a filter, not the answer.
  struct ByBegin {
    std::uint32_t begin;
    std::uint32_t end;
    std::uint32_t position : 28, lanes : 4;
  };
  std::array<std::vector<AsyncAccess>, kAccessKinds> of_;
  std::array<std::vector<ByBegin>, kAccessKinds> by_begin_;  // per kind, sorted by (begin, position)
  std::array<std::uint32_t, kAccessKinds> longest_{};        // per kind, the longest range
  std::array<std::uint64_t, kAccessKinds> generation_{};
  std::vector<AsyncAccess*> found_;                          // overlapping()'s answer
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::size_t used_ = 0;
};

namespace races {

// Whether `observer` is ordered after access `a`.
bool ordered_after(const AsyncAccess& a, const WarpState& observer);

// Hooks, called by the operations (each raises a located MisuseError on a race).
void tma_write(Cta& dest, WarpState& producer, std::uint32_t begin, std::uint32_t end);
void tma_landed(Cta& dest, const WarpState& producer, std::uint32_t begin, const HbPhase& phase);
// An MMA operand read of SMEM [begin, end). It may stand for the warp's consecutive k-steps
// (check/MmaRaceChecks), the first reading [begin, first_end) and each later one starting inside
// the reads before it: checked whole, recorded as the reads one by one would be (the first's
// record, widened to `end`).
void mma_operand(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end, const char* which,
                 std::uint32_t first_end);
// A wgmma of `reader` (in its commit group `group`, 1-based) reads SMEM [begin, end).
void wgmma_operand(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end, const char* which,
                   std::uint64_t group);
// `reader`'s wgmma.wait_group retired its groups up to `retired`.
void wgmma_retired(Cta& cta, WarpState& reader, std::uint64_t retired);
void mma_accumulator(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end);
void tmem_load(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end);
void tmem_wait_ld(Cta& cta, WarpState& reader);
// A tcgen05.st of TMEM columns [begin, end) in the writer's lane quadrant: an MMA writing or
// reading them (A operand) must be ordered before by a commit, another warp's tcgen05.ld or
// tcgen05.st of them by its wait::ld / wait::st and a release. It counts as done at the writer's
// tcgen05.wait::st; the writer's own tcgen05.ld of the columns must come after that wait.
void tmem_store(Cta& cta, WarpState& writer, std::uint32_t begin, std::uint32_t end);
void tmem_wait_st(Cta& cta, WarpState& writer);
// A TS-form MMA reads its A operand from TMEM columns [begin, end): every tcgen05.st of them must
// be ordered before it (the writer's wait::st, then a release).
// (first_end: as for mma_operand.)
void mma_tmem_operand(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end, std::uint32_t first_end);
void generic_write(Cta& cta, WarpState& writer, std::uint32_t begin, std::uint32_t end);
// An ld.shared of [begin, end): a TMA load into those bytes must be ordered before it (its phase
// seen), and a later TMA load into them must be ordered after it (the reader arrived on a barrier
// phase the loading warp saw complete).
void generic_read(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end);
void proxy_fence(Cta& cta, WarpState& writer);
void async_proxy_read(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end, const char* op);
// tcgen05.dealloc of columns [begin, end) by `ws`: every tcgen05.ld of them must be ordered before.
void dealloc(Cta& cta, WarpState& ws, std::uint32_t begin, std::uint32_t end);
}  // namespace races
}  // namespace bwsim
