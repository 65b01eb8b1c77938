#pragma once
// Asynchronous-race detection (functional and timing mode alike). Every asynchronous access to a
// CTA's SMEM or TMEM is recorded with the warp that issued it; a conflicting later access must be
// ordered after it through the synchronisation the program actually used, not through timing:
//   - a TMA load is ordered once its complete_tx landed in phase p of a barrier and the reader has
//     seen phase p of that barrier complete (a passing wait);
//   - an MMA (operand reads, accumulator writes) once a later tcgen05.commit of its warp arrived in
//     phase p of a barrier the other party has seen complete;
//   - a tcgen05.ld once its warp passed tcgen05.wait::ld and then arrived on such a barrier;
//   - a wgmma's operand reads once its warp passed the wgmma.wait_group that retires it and then
//     arrived on such a barrier;
//   - a generic st.shared is visible to the async proxy (TMA store, MMA) after its warp's
//     fence.proxy.async;
//   - a generic ld.shared once its warp then arrived on a barrier phase the other party has seen
//     complete (mbarrier.arrive releases).
// Ordering is followed through one mbarrier hop (the releasing arrival and the observing wait) and
// through bar.sync / barrier.cluster for finished tcgen05.ld, wgmma reads and ld.shared and for TMA
// loads whose phase a participating warp had seen; longer chains through a third warp's arrive are
// not followed (see README, known limits).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/core/Cycle.hpp"

namespace bwsim {

class Cta;
struct WarpState;

enum class AccessKind : std::uint8_t { TmaWrite, MmaRead, MmaWrite, TmemLoad, GenericWrite, WgmmaRead, GenericRead };

// A barrier phase: ordered-after for whoever saw it complete.
struct ReleaseToken {
  const Cta* cta = nullptr;
  std::uint32_t offset = 0;
  std::uint32_t generation = 0;
  std::uint64_t phase = 0;
};

// One arrival a warp issued (an mbarrier arrive or a commit's arrival), in issue order.
struct ReleaseEntry {
  std::uint64_t seq = 0;  // the warp's release count when issued
  bool commit = false;    // a tcgen05.commit (orders the warp's earlier async tcgen05 ops)
  bool landed = false;
  ReleaseToken token;     // phase filled in when the arrival lands
};

struct AsyncAccess {
  AccessKind kind;
  std::uint32_t begin = 0, end = 0;  // SMEM bytes or TMEM columns
  WarpState* issuer = nullptr;
  std::uint64_t seq = 0;  // issuer's release count at the access
  Cycle cycle = 0;
  bool done = true;           // TmaWrite: landed; TmemLoad: waited; GenericWrite: fenced; WgmmaRead: retired
  std::uint64_t done_seq = 0; // TmemLoad, WgmmaRead: the release count at its wait::ld / wait_group
  std::uint64_t group = 0;    // WgmmaRead: 1 + the issuer's commit group
  bool synced = false;        // done (TmaWrite: its phase seen) before a bar.sync / barrier.cluster all later code follows
  bool read_unwritten = false;  // TmemLoad of columns no recorded MMA had written yet
  const WarpState* ordered_for = nullptr;  // the last warp found ordered after it (a cache)
  ReleaseToken landing;       // TmaWrite
};

// A CTA's records: one per (kind, issuer, range), the latest access (record() replaces it in
// place), found through `index` without a scan; never removed while the CTA lives.
struct RaceRecordKey {
  AccessKind kind;
  const WarpState* issuer;
  std::uint32_t begin, end;
  bool operator==(const RaceRecordKey&) const = default;
};
struct RaceRecordKeyHash {
  std::size_t operator()(const RaceRecordKey& k) const noexcept {
    return static_cast<std::size_t>(mix64(reinterpret_cast<std::uintptr_t>(k.issuer) ^
                                          (static_cast<std::uint64_t>(k.begin) << 20) ^
                                          (static_cast<std::uint64_t>(k.end) << 40) ^ static_cast<std::uint64_t>(k.kind)));
  }
};
struct RaceRecords {
  std::vector<AsyncAccess> all;
  std::unordered_map<RaceRecordKey, std::uint32_t, RaceRecordKeyHash> index;  // key -> position in `all`
};

namespace races {

// Whether `observer` is ordered after access `a`.
bool ordered_after(const AsyncAccess& a, const WarpState& observer);
// Whether `issuer` arrived, after its release count `after`, on a barrier phase `observer` saw complete.
bool released_after(const WarpState& issuer, std::uint64_t after, const WarpState& observer);

// Hooks, called by the operations (each raises a located MisuseError on a race).
void tma_write(Cta& dest, WarpState& producer, std::uint32_t begin, std::uint32_t end);
void tma_landed(Cta& dest, const WarpState& producer, std::uint32_t begin, const ReleaseToken& token);
void mma_operand(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end, const char* which);
// A wgmma of `reader` (in its commit group `group`, 1-based) reads SMEM [begin, end).
void wgmma_operand(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end, const char* which,
                   std::uint64_t group);
// `reader`'s wgmma.wait_group retired its groups up to reader.wgmma_retired.
void wgmma_retired(Cta& cta, WarpState& reader);
void mma_accumulator(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end);
void tmem_load(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end);
void tmem_wait_ld(Cta& cta, WarpState& reader);
void generic_write(Cta& cta, WarpState& writer, std::uint32_t begin, std::uint32_t end);
// An ld.shared of [begin, end): a TMA load into those bytes must be ordered before it (its phase
// seen), and a later TMA load into them must be ordered after it (the reader arrived on a barrier
// phase the loading warp saw complete).
void generic_read(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end);
void proxy_fence(Cta& cta, WarpState& writer);
void async_proxy_read(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end, const char* op);
// A bar.sync (cluster_wide false) or barrier.cluster completed over `cta`: its finished
// tcgen05.ld, wgmma operand reads and ld.shared, and the TMA loads into it whose landing phase a
// participating warp had seen, are ordered before everything after it.
void barrier_synced(Cta& cta, bool cluster_wide);
// tcgen05.dealloc of columns [begin, end) by `ws`: every tcgen05.ld of them must be ordered before.
void dealloc(Cta& cta, WarpState& ws, std::uint32_t begin, std::uint32_t end);
// An arrival by `ws` on `target`'s barrier at `offset` was issued / has landed in `phase`.
void arrival_issued(WarpState& ws, const Cta& target, std::uint32_t offset, bool commit);
void arrival_landed(WarpState& ws, const Cta& target, std::uint32_t offset, std::uint32_t generation,
                    std::uint64_t phase);

}  // namespace races
}  // namespace bwsim
