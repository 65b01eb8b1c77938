#include "bwsim/check/RaceChecker.hpp"
#include "bwsim/check/RaceCheckThread.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/hw/sm/Cta.hpp"

namespace bwsim {

std::pair<std::uint32_t, bool> RaceRecords::find_or_add(AccessKind kind, const WarpState* issuer, std::uint32_t begin,
                                                        std::uint32_t end, std::uint32_t lanes) {
  if (2 * (used_ + 1) > slots_.size()) grow();
  const std::uint64_t range = range_key(kind, begin, end);
  for (std::size_t i = home(issuer, range);; i = (i + 1) & (slots_.size() - 1)) {
    Slot& s = slots_[i];
    if (s.issuer == issuer && s.range == range) return {s.position, false};
    if (s.issuer == nullptr) {
      s = Slot{issuer, range, static_cast<std::uint32_t>(of(kind).size())};
      ++used_;
      auto& sorted = by_begin_[static_cast<std::size_t>(kind)];
      sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), begin,
                                     [](std::uint32_t b, const ByBegin& x) { return b < x.begin; }),
                    ByBegin{begin, end, s.position, lanes});
      std::uint32_t& longest = longest_[static_cast<std::size_t>(kind)];
      longest = std::max(longest, end - begin);
      return {s.position, true};
    }
  }
}

std::span<AsyncAccess* const> RaceRecords::overlapping(std::initializer_list<AccessKind> kinds, std::uint32_t begin,
                                                       std::uint32_t end, std::uint32_t lanes) {
  found_.clear();
  for (const AccessKind k : kinds) {
    const auto i = static_cast<std::size_t>(k);
    std::vector<AsyncAccess>& records = of_[i];
    // A record starting at or before begin - longest ends by begin: start the scan after those.
    const std::uint32_t from = begin >= longest_[i] ? begin - longest_[i] + 1 : 0;
    auto it = std::lower_bound(by_begin_[i].begin(), by_begin_[i].end(), from,
                               [](const ByBegin& x, std::uint32_t b) { return x.begin < b; });
    for (; it != by_begin_[i].end() && it->begin < end; ++it)
      if ((it->lanes & lanes) != 0 && it->end > begin)
        if (AsyncAccess& a = records[it->position]; a.end > begin) found_.push_back(&a);
  }
  return found_;
}

void RaceRecords::widen(AccessKind kind, std::uint32_t position, std::uint32_t end) {
  AsyncAccess& a = of(kind)[position];
  a.end = end;
  changed(kind);
  std::uint32_t& longest = longest_[static_cast<std::size_t>(kind)];
  longest = std::max(longest, end - a.begin);
  auto& sorted = by_begin_[static_cast<std::size_t>(kind)];
  for (auto it = std::lower_bound(sorted.begin(), sorted.end(), a.begin,
                                  [](const ByBegin& x, std::uint32_t b) { return x.begin < b; });
       it != sorted.end() && it->begin == a.begin; ++it)
    if (it->position == position) it->end = std::max(it->end, end);
}

void RaceRecords::grow() {
  std::vector<Slot> old(std::max<std::size_t>(64, 2 * slots_.size()));
  old.swap(slots_);
  for (const Slot& s : old) {
    if (s.issuer == nullptr) continue;
    std::size_t i = home(s.issuer, s.range);
    while (slots_[i].issuer != nullptr) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = s;
  }
}

}  // namespace bwsim

namespace bwsim::races {
namespace {

// The records of `kinds` of `cta` that overlap [begin, end).
std::span<AsyncAccess* const> overlapping(Cta& cta, std::initializer_list<AccessKind> kinds, std::uint32_t begin,
                                          std::uint32_t end, std::uint32_t lanes = RaceRecords::kAllLanes) {
  return cta.race_record_table().overlapping(kinds, begin, end, lanes);
}

// The TMEM lane quadrants an access touches: a warp's tcgen05.ld / st its own (warp index % 4),
// every other access all four.
std::uint32_t lanes_of(AccessKind kind, const WarpState& issuer) {
  return kind == AccessKind::TmemLoad || kind == AccessKind::TmemStore ? 1u << issuer.lane_quadrant
                                                                         : RaceRecords::kAllLanes;
}

const char* what_of(AccessKind k) {
  switch (k) {
    case AccessKind::TmaWrite: return "the TMA load";
    case AccessKind::MmaRead: return "the tcgen05.mma operand read";
    case AccessKind::MmaWrite: return "the tcgen05.mma accumulator write";
    case AccessKind::TmemLoad: return "the tcgen05.ld";
    case AccessKind::GenericWrite: return "the st.shared";
    case AccessKind::WgmmaRead: return "the wgmma operand read";
    case AccessKind::GenericRead: return "the ld.shared";
    case AccessKind::TmemStore: return "the tcgen05.st";
    case AccessKind::MmaTmemRead: return "the tcgen05.mma A-operand read from TMEM";
  }
  return "?";
}

std::string by(const AsyncAccess& a) {
  return fmt::format("{} issued by warp {} of CTA {} at cycle {}", what_of(a.kind), a.issuer->index, a.issuer->cta->id(),
                     a.cycle);
}

// The cycle an access is issued at, for the error that names it: the issuing warp's clock. With a
// race-checking thread (where every check runs then) that clock is the simulation's, which has
// moved on, and an error found there is reported by the inline run, so the cycle is left out.
Cycle cycle_of(const WarpState& issuer) { return RaceCheckThread::on_checker_thread() ? 0 : issuer.ready; }

// Replaces the record of the same kind, issuer and range, or appends one: a warp's repeated
// access to the same buffer keeps one record, the latest. A `pending` access (done = false) that
// the issuer's own later step completes (Undone) is listed in the issuer's undone_records once,
// however often it is replaced before that step.
enum class Completion : std::uint8_t { Done, Pending, Undone };
AsyncAccess& record(Cta& cta, AccessKind kind, WarpState& issuer, std::uint32_t begin, std::uint32_t end,
                    Completion completion = Completion::Done) {
  RaceRecords& r = cta.race_record_table();
  r.changed(kind);
  std::vector<AsyncAccess>& of = r.of(kind);
  const std::uint64_t hash = mix64(RaceRecords::range_key(kind, begin, end) ^ reinterpret_cast<std::uintptr_t>(&cta));
  std::uint32_t& cached = issuer.race_record_cache[hash % issuer.race_record_cache.size()];
  // A hit names a position of this kind; it may be another CTA's (a warp records into its peers'
  // SMEM too), so the position is bounds-checked and the record compared.
  std::uint32_t at = (cached & 0xfffffff) - 1;
  bool added = false;
  if (cached >> 28 != static_cast<std::uint32_t>(kind) || at >= of.size() || of[at].issuer != &issuer ||
      of[at].begin != begin || of[at].end != end) {
    std::tie(at, added) = r.find_or_add(kind, &issuer, begin, end, lanes_of(kind, issuer));
    cached = static_cast<std::uint32_t>(kind) << 28 | (at + 1);
    if (added) of.emplace_back();
  }
  AsyncAccess& a = of[at];
  if (completion == Completion::Undone && (added || a.done)) {
    if (&cta != issuer.cta_for_checks)
      throw std::logic_error("race checker: an access its issuer completes, in another CTA");
    issuer.undone_records.push_back(WarpState::UndoneRecord{kind, at});
  }
  const HbClock seq = kind == AccessKind::MmaRead || kind == AccessKind::MmaWrite || kind == AccessKind::MmaTmemRead
                          ? issuer.hb.commits
                          : issuer.hb.releases;
  return a = AsyncAccess{.issuer = &issuer,
                         .cycle = cycle_of(issuer),
                         .begin = begin,
                         .end = end,
                         .seq = seq,
                         .kind = kind,
                         .done = completion == Completion::Done};
}

// Completes the issuer's undone records of `kind` in its CTA that `accept` takes (each then
// leaves the list), with done_seq the issuer's releases now.
template <class Accept>
void complete_undone(Cta& cta, WarpState& issuer, AccessKind kind, Accept accept) {
  std::vector<AsyncAccess>& of = cta.race_records(kind);
  std::vector<WarpState::UndoneRecord>& undone = issuer.undone_records;
  std::size_t kept = 0;
  for (const WarpState::UndoneRecord& u : undone) {
    if (u.kind == kind) {
      AsyncAccess& a = of[u.position];
      if (accept(a)) {
        a.done = true;
        a.done_seq = issuer.hb.releases;
        continue;
      }
    }
    undone[kept++] = u;
  }
  undone.resize(kept);
}

}  // namespace

namespace {
// Ordering only ever becomes true (phases seen stay seen), so the last observer found ordered
// after a record is remembered until the record is replaced by a newer access.
bool ordered_after_cached(AsyncAccess& a, const WarpState& o) {
  if (a.ordered_for == &o) return true;
  if (!ordered_after(a, o)) return false;
  a.ordered_for = &o;
  return true;
}
}  // namespace

bool ordered_after(const AsyncAccess& a, const WarpState& o) {
  const HbWarp& by = o.hb;
  switch (a.kind) {
    case AccessKind::TmaWrite: return a.done && by.knows(a.landing);
    case AccessKind::MmaRead:
    case AccessKind::MmaTmemRead:
    case AccessKind::MmaWrite: return by.knows_commit(a.issuer->hb, a.seq + 1);
    case AccessKind::TmemLoad:
    case AccessKind::TmemStore:
    case AccessKind::WgmmaRead: return a.done && (a.issuer == &o || by.knows_release(a.issuer->hb, a.done_seq + 1));
    case AccessKind::GenericWrite: return a.done;
    case AccessKind::GenericRead: return a.issuer == &o || by.knows_release(a.issuer->hb, a.seq + 1);
  }
  return false;
}

void tma_write(Cta& dest, WarpState& producer, std::uint32_t begin, std::uint32_t end) {
  for (AsyncAccess* p : overlapping(dest, {AccessKind::GenericRead, AccessKind::MmaRead, AccessKind::WgmmaRead}, begin, end)) {
    AsyncAccess& a = *p;
    if (ordered_after_cached(a, producer)) continue;
    if (a.kind == AccessKind::GenericRead)
      producer.cta->fail(Rule::RaceStageReuse, producer, "tma.load",
                         fmt::format("writes SMEM [{:#x}, {:#x}) of CTA {} that {} may still read: that warp has not "
                                     "made a release after the read (mbarrier arrive, bar.sync, barrier.cluster) that happens-before this warp",
                                     begin, end, dest.id(), by(a)),
                         "release a stage after the last read of it (arrive on its empty barrier), and acquire it by "
                         "waiting on that barrier before loading into it");
    if (a.kind == AccessKind::MmaRead)
      producer.cta->fail(Rule::RaceStageReuse, producer, "tma.load",
                         fmt::format("writes SMEM [{:#x}, {:#x}) of CTA {} that {} may still read: no tcgen05.commit "
                                     "of that warp after the MMA happens-before this warp",
                                     begin, end, dest.id(), by(a)),
                         "release a stage with tcgen05.commit (not a plain arrive) and acquire it by waiting on that "
                         "barrier before loading into it");
    producer.cta->fail(Rule::RaceStageReuse, producer, "tma.load",
                       fmt::format("writes SMEM [{:#x}, {:#x}) of CTA {} that {} may still read: that warp has not "
                                   "passed a wgmma.wait_group retiring it and then made a release that happens-before "
                                   "this warp",
                                   begin, end, dest.id(), by(a)),
                       "release a stage only after wgmma.wait_group covers the wgmmas reading it, and acquire it by "
                       "waiting on that barrier before loading into it");
  }
  record(dest, AccessKind::TmaWrite, producer, begin, end, Completion::Pending);
}

void tma_landed(Cta& dest, const WarpState& producer, std::uint32_t begin, const HbPhase& phase) {
  for (AsyncAccess& a : dest.race_records(AccessKind::TmaWrite))
    if (a.issuer == &producer && a.begin == begin && !a.done) {
      a.done = true;
      a.landing = phase;
      return;
    }
}

namespace {
// A located race error if a TMA write or an unfenced st.shared of [begin, end) is not ordered
// before `reader`'s tensor-core read `op`.
void check_operand_written(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end, const char* which,
                           const char* op) {
  for (AsyncAccess* p : overlapping(cta, {AccessKind::TmaWrite, AccessKind::GenericWrite}, begin, end)) {
    AsyncAccess& a = *p;
    if (ordered_after_cached(a, mma)) continue;
    if (a.kind == AccessKind::TmaWrite)
      mma.cta->fail(Rule::RaceEarlyRead, mma, op,
                    fmt::format("{} reads SMEM [{:#x}, {:#x}) of CTA {} that {} writes: its complete_tx has not landed "
                                "in a barrier phase that happens-before this warp",
                                which, begin, end, cta.id(), by(a)),
                    "wait on the stage's full barrier (the one the TMA load signals) before issuing the MMA");
    if (a.kind == AccessKind::GenericWrite)
      mma.cta->fail(Rule::RaceMissingProxyFence, mma, op,
                    fmt::format("{} reads SMEM [{:#x}, {:#x}) written by {} without fence.proxy.async", which, begin,
                                end, by(a)),
                    "fence.proxy.async after generic SMEM writes that the tensor core reads");
  }
}
}  // namespace

void generic_read(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end) {
  for (AsyncAccess* p : overlapping(cta, {AccessKind::TmaWrite}, begin, end)) {
    AsyncAccess& a = *p;
    if (ordered_after_cached(a, reader)) continue;
    reader.cta->fail(Rule::RaceEarlyRead, reader, "ld.shared",
                     fmt::format("reads SMEM [{:#x}, {:#x}) of CTA {} that {} writes: its complete_tx has not landed "
                                 "in a barrier phase that happens-before this warp",
                                 begin, end, cta.id(), by(a)),
                     "wait on the stage's full barrier (the one the TMA load signals) before reading it");
  }
  record(cta, AccessKind::GenericRead, reader, begin, end);
}

namespace {
// An operand read that starts inside one of the warp's last two operand-read records of this kind
// (MmaRead: SMEM, MmaTmemRead: TMEM) in this CTA, with no tcgen05.commit of the warp in between,
// extends that record: every read it covers is ordered by the same fact (a later commit of the
// warp observed), so their union stands for them all. The k-steps of a stage (each the tile's span
// shifted by one k-slice) keep one record per operand instead of one each, and a TMA load into
// the stage (a tcgen05.st into a TMEM operand) checks that one. Whether the record is new or
// extended, the latest read is the one it names.
WarpState::OperandRecords& last_operand_reads(Cta& cta, WarpState& mma, AccessKind kind) {
  return mma.operand_records[kind == AccessKind::MmaTmemRead ? 1 : 0][cta.rank() % 2];
}

bool extend_operand_read(Cta& cta, WarpState& mma, AccessKind kind, std::uint32_t begin, std::uint32_t end) {
  const WarpState::OperandRecords& last = last_operand_reads(cta, mma, kind);
  if (last.cta != &cta) return false;
  std::vector<AsyncAccess>& reads = cta.race_records(kind);
  for (const std::uint32_t p : last.positions) {
    if (p == 0 || p > reads.size()) continue;
    AsyncAccess& a = reads[p - 1];
    if (a.issuer != &mma || a.seq != mma.hb.commits || begin < a.begin || begin > a.end) continue;
    if (end > a.end) cta.race_record_table().widen(kind, p - 1, end);
    a.cycle = cycle_of(mma);
    return true;
  }
  return false;
}

// Records an operand read of `kind` by `mma`: extends one of its last two, or adds one.
void operand_read(Cta& cta, WarpState& mma, AccessKind kind, std::uint32_t begin, std::uint32_t end) {
  if (extend_operand_read(cta, mma, kind, begin, end)) return;
  const AsyncAccess& r = record(cta, kind, mma, begin, end);
  const auto position = static_cast<std::uint32_t>(&r - cta.race_records(kind).data());
  WarpState::OperandRecords& last = last_operand_reads(cta, mma, kind);
  last.positions = {position + 1, last.cta == &cta ? last.positions[0] : 0};
  last.cta = &cta;
}

// The reads [begin, first_end), then ones up to `end` each starting inside those before: the
// first's record, which the later ones extend (the last one's start lies in it, so its read
// extends it to `end` as the steps between would have).
void operand_reads(Cta& cta, WarpState& mma, AccessKind kind, std::uint32_t begin, std::uint32_t end,
                   std::uint32_t first_end) {
  operand_read(cta, mma, kind, begin, first_end);
  if (end > first_end) operand_read(cta, mma, kind, begin, end);
}
}  // namespace

void mma_operand(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end, const char* which,
                 std::uint32_t first_end) {
  check_operand_written(cta, mma, begin, end, which, "tcgen05.mma");
  operand_reads(cta, mma, AccessKind::MmaRead, begin, end, first_end);
}

void wgmma_operand(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end, const char* which,
                   std::uint64_t group) {
  check_operand_written(cta, reader, begin, end, which, "wgmma.mma_async");
  record(cta, AccessKind::WgmmaRead, reader, begin, end, Completion::Undone).group = group;
}

void wgmma_retired(Cta& cta, WarpState& reader, std::uint64_t retired) {
  complete_undone(cta, reader, AccessKind::WgmmaRead, [&](const AsyncAccess& a) { return a.group <= retired; });
}

void mma_accumulator(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end) {
  // The k-steps of one accumulator check the same warps' accesses: while none was added or
  // replaced, the check this warp passed last for these columns still passes.
  const RaceRecords& table = cta.race_record_table();
  const std::uint64_t generation = table.generation(AccessKind::TmemLoad) + table.generation(AccessKind::TmemStore);
  WarpState::AccumulatorCheck& last = mma.accumulator_checked[cta.rank() % 2];
  const WarpState::AccumulatorCheck now{&cta, begin, end, generation};
  if (last == now) {
    record(cta, AccessKind::MmaWrite, mma, begin, end);
    return;
  }
  for (AsyncAccess* p : overlapping(cta, {AccessKind::TmemLoad, AccessKind::TmemStore}, begin, end)) {
    AsyncAccess& a = *p;
    if (ordered_after_cached(a, mma)) continue;
    if (a.kind == AccessKind::TmemStore)
      mma.cta->fail(Rule::RaceAccumulatorOverwrite, mma, "tcgen05.mma",
                    fmt::format("writes TMEM columns [{}, {}) of CTA {} that {} writes: that warp has not passed "
                                "tcgen05.wait::st and then made a release that happens-before this warp",
                                begin, end, cta.id(), by(a)),
                    "let the storing warp wait::st and arrive on a barrier the MMA warp waits on first");
    if (a.read_unwritten)  // the reader did not wait for this (its first) accumulator
      mma.cta->fail(Rule::RaceEarlyAccumulatorRead, mma, "tcgen05.mma",
                    fmt::format("writes TMEM columns [{}, {}) of CTA {} that {} read before any MMA wrote them: the "
                                "reader did not wait for the commit of this accumulator",
                                begin, end, cta.id(), by(a)),
                    "wait on the accumulator's full barrier (signalled by the MMA warp's tcgen05.commit) first");
    mma.cta->fail(Rule::RaceAccumulatorOverwrite, mma, "tcgen05.mma",
                    fmt::format("writes TMEM columns [{}, {}) of CTA {} that {} reads: that warp has not waited "
                                "(tcgen05.wait::ld) and then made a release that happens-before this warp",
                                begin, end, cta.id(), by(a)),
                    "let the accumulator's readers release it (wait::ld, then arrive on its empty barrier) and "
                    "wait on that barrier before the next MMA into it");
  }
  last = now;
  record(cta, AccessKind::MmaWrite, mma, begin, end);
}

void tmem_load(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end) {
  bool written = false;
  for (AsyncAccess* p : overlapping(cta, {AccessKind::TmemStore}, begin, end, lanes_of(AccessKind::TmemLoad, reader)))
    if (AsyncAccess& a = *p; a.issuer == &reader ? !a.done : !ordered_after_cached(a, reader))
      reader.cta->fail(Rule::RaceEarlyRead, reader, "tcgen05.ld",
                       fmt::format("reads TMEM columns [{}, {}) of its lanes that {} writes: that warp has not passed "
                                   "tcgen05.wait::st and then made a release that happens-before this warp",
                                   begin, end, by(a)),
                       "let the storing warp wait::st and then arrive on a barrier (or bar.sync) this warp waits on");
  for (AsyncAccess* p : overlapping(cta, {AccessKind::MmaWrite}, begin, end)) {
    AsyncAccess& a = *p;
    written = true;
    if (!ordered_after_cached(a, reader))
      reader.cta->fail(Rule::RaceEarlyAccumulatorRead, reader, "tcgen05.ld",
                       fmt::format("reads TMEM columns [{}, {}) that {} writes: no tcgen05.commit of that warp after "
                                   "the MMA happens-before this warp",
                                   begin, end, by(a)),
                       "wait on the accumulator's full barrier (signalled by the MMA warp's tcgen05.commit) first");
  }
  record(cta, AccessKind::TmemLoad, reader, begin, end, Completion::Undone).read_unwritten = !written;
}

void tmem_wait_ld(Cta& cta, WarpState& reader) {
  complete_undone(cta, reader, AccessKind::TmemLoad, [](const AsyncAccess&) { return true; });
}

void tmem_store(Cta& cta, WarpState& writer, std::uint32_t begin, std::uint32_t end) {
  for (AsyncAccess* p : overlapping(cta, {AccessKind::MmaWrite, AccessKind::MmaTmemRead, AccessKind::TmemLoad, AccessKind::TmemStore},
                                    begin, end, lanes_of(AccessKind::TmemStore, writer))) {
    AsyncAccess& a = *p;
    const bool others = a.kind == AccessKind::MmaWrite || a.kind == AccessKind::MmaTmemRead || a.issuer != &writer;
    if (!others || ordered_after_cached(a, writer)) continue;
    if (a.kind == AccessKind::MmaWrite)
      writer.cta->fail(Rule::RaceAccumulatorOverwrite, writer, "tcgen05.st",
                       fmt::format("writes TMEM columns [{}, {}) of CTA {} that {} writes: no tcgen05.commit of that "
                                   "warp after the MMA happens-before this warp",
                                   begin, end, cta.id(), by(a)),
                       "wait on the barrier the MMA warp's tcgen05.commit signals before storing over its result");
    writer.cta->fail(Rule::RaceStageReuse, writer, "tcgen05.st",
                     fmt::format("writes TMEM columns [{}, {}) of CTA {} that {} may still {}: {}", begin, end,
                                 cta.id(), by(a), a.kind == AccessKind::TmemStore ? "write" : "read",
                                 a.kind == AccessKind::MmaTmemRead
                                     ? "no tcgen05.commit of that warp after the MMA happens-before this warp"
                                     : fmt::format("that warp has not passed tcgen05.wait::{} and then made a release "
                                                   "that happens-before this warp",
                                                   a.kind == AccessKind::TmemLoad ? "ld" : "st")),
                     "order the readers before the store: a commit (MMA) or wait::ld and an arrive (warp) on a "
                     "barrier this warp waits on, or a bar.sync after the reads");
  }
  record(cta, AccessKind::TmemStore, writer, begin, end, Completion::Undone);
}

void tmem_wait_st(Cta& cta, WarpState& writer) {
  complete_undone(cta, writer, AccessKind::TmemStore, [](const AsyncAccess&) { return true; });
}

void mma_tmem_operand(Cta& cta, WarpState& mma, std::uint32_t begin, std::uint32_t end, std::uint32_t first_end) {
  for (AsyncAccess* p : overlapping(cta, {AccessKind::TmemStore}, begin, end)) {
    AsyncAccess& a = *p;
    if (ordered_after_cached(a, mma)) continue;
    mma.cta->fail(Rule::RaceEarlyRead, mma, "tcgen05.mma",
                  fmt::format("its A operand reads TMEM columns [{}, {}) of CTA {} that {} writes: that warp has not "
                              "passed tcgen05.wait::st and then made a release that happens-before this warp",
                              begin, end, cta.id(), by(a)),
                  "let the storing warps wait::st, fence::before_thread_sync and arrive on a barrier the MMA warp "
                  "waits on before the MMA");
  }
  operand_reads(cta, mma, AccessKind::MmaTmemRead, begin, end, first_end);
}

void generic_write(Cta& cta, WarpState& writer, std::uint32_t begin, std::uint32_t end) {
  record(cta, AccessKind::GenericWrite, writer, begin, end, Completion::Undone);
}

void proxy_fence(Cta& cta, WarpState& writer) {
  complete_undone(cta, writer, AccessKind::GenericWrite, [](const AsyncAccess&) { return true; });
}

void async_proxy_read(Cta& cta, WarpState& reader, std::uint32_t begin, std::uint32_t end, const char* op) {
  for (const AsyncAccess* a : overlapping(cta, {AccessKind::GenericWrite}, begin, end))
    if (!a->done)
      reader.cta->fail(Rule::RaceMissingProxyFence, reader, op,
                       fmt::format("reads SMEM [{:#x}, {:#x}) written by {} without fence.proxy.async", begin, end,
                                   by(*a)),
                       "fence.proxy.async after generic SMEM writes that the async proxy (TMA, MMA) reads");
}

void dealloc(Cta& cta, WarpState& ws, std::uint32_t begin, std::uint32_t end) {
  for (const AsyncAccess* a : overlapping(cta, {AccessKind::TmemLoad, AccessKind::TmemStore}, begin, end))
    if (!ordered_after(*a, ws))
      ws.cta->fail(Rule::TmemAllocMisuse, ws, "tcgen05.dealloc",
                   fmt::format("frees TMEM columns [{}, {}) that {} still accesses (not waited with tcgen05.wait::{} "
                               "and released to this warp: happens-before)",
                               begin, end, by(*a), a->kind == AccessKind::TmemLoad ? "ld" : "st"),
                   "dealloc after every reader and writer of the columns has waited for its accesses and signalled "
                   "this warp");
}

}  // namespace bwsim::races
