#pragma once
// Chrome trace-event JSON, streamed to a file as the simulation runs (never held in memory).
// Perfetto and chrome://tracing open it. The time axis is SM cycles: one trace "microsecond"
// is one cycle. Callers check `Tracer*` for null first, so a run without a trace formats nothing.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

// What a trace keeps (--trace-kinds): warp tracks, the units' tracks, barrier phase flips, flow
// arrows and counters; and the cycle window (--trace-window) outside which events are dropped.
enum TraceKind : std::uint32_t {
  kTraceWarps = 1,
  kTraceTma = 2,
  kTraceMma = 4,
  kTraceBarriers = 8,
  kTraceFlows = 16,
  kTraceCounters = 32,
  kTraceAll = 63,
};
// Parses "warps,tma,mma,barriers,flows,counters" (any subset); throws InputError otherwise.
std::uint32_t parse_trace_kinds(std::string_view list);

struct TraceFilter {
  std::uint32_t kinds = kTraceAll;
  Cycle window_begin = 0;
  Cycle window_end = ~Cycle{0};
};

class Tracer {
 public:
  // Opens `path` for writing; throws InputError if it cannot.
  explicit Tracer(const std::string& path, double clock_ghz, TraceFilter filter = {});
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  void process_name(int pid, std::string_view name);
  void thread_name(int pid, int tid, std::string_view name);
  // `args` is a JSON object body without braces, e.g. R"("bytes":16384)", or empty.
  void span(int pid, int tid, std::string_view name, Cycle start, Cycle duration, std::string_view args = {});
  void instant(int pid, int tid, std::string_view name, Cycle at, std::string_view args = {});
  void counter(int pid, std::string_view name, Cycle at, double value);
  // An asynchronous span (overlapping operations in flight, e.g. a TMA load from issue to
  // completion) on the unit's track of `category` ("tma" or "mma"), matched by (name, id).
  void async_span(int pid, std::string_view category, std::string_view name, std::uint64_t id, Cycle begin, Cycle end,
                  std::string_view args = {});
  // A flow arrow from the slice around (`from_tid`, `from`) to the one around (`to_tid`, `to`),
  // e.g. a TMA issue to the barrier phase it completed, a phase flip to the warp it woke.
  void flow(int from_pid, int from_tid, Cycle from, int to_pid, int to_tid, Cycle to, std::string_view name);
  std::uint64_t events_written() const { return events_; }
  // Finishes the JSON document (also done by the destructor).
  void close();

 private:
  void begin_event();
  bool keeps(int tid, Cycle start, Cycle end) const;
  std::FILE* file_ = nullptr;
  std::uint64_t events_ = 0;
  std::uint64_t next_flow_ = 0;
  TraceFilter filter_;
};

// Track ids inside an SM's process: a warp's is slot * kWarpTracksPerCta + warp index, where slot
// numbers the CTAs resident on the SM together; the units' tracks come after every warp's.
inline constexpr int kWarpTracksPerCta = 1024;
inline constexpr int kTmaTrack = 1'000'000;
inline constexpr int kBarrierTrack = 1'000'001;
inline constexpr int kMmaTrack = 1'000'002;
inline constexpr int kCtaTrack = 1'000'003;  // the resident CTAs' lifetimes (each name carries cluster and rank)
inline constexpr int kTmemTrack = 1'000'004;  // the tcgen05.ld/st datapath: each transfer while it moves data

// JSON string literal (with quotes) for arbitrary text.
std::string json_quote(std::string_view s);

}  // namespace bwsim
