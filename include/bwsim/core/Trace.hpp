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

class Tracer {
 public:
  // Opens `path` for writing; throws InputError if it cannot.
  explicit Tracer(const std::string& path, double clock_ghz);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  void process_name(int pid, std::string_view name);
  void thread_name(int pid, int tid, std::string_view name);
  // `args` is a JSON object body without braces, e.g. R"("bytes":16384)", or empty.
  void span(int pid, int tid, std::string_view name, Cycle start, Cycle duration, std::string_view args = {});
  void instant(int pid, int tid, std::string_view name, Cycle at, std::string_view args = {});
  void counter(int pid, std::string_view name, Cycle at, double value);
  // Asynchronous spans (overlapping operations in flight), matched by (name, id).
  void async_begin(int pid, std::string_view category, std::string_view name, std::uint64_t id, Cycle at,
                   std::string_view args = {});
  void async_end(int pid, std::string_view category, std::string_view name, std::uint64_t id, Cycle at);
  std::uint64_t events_written() const { return events_; }
  // Finishes the JSON document (also done by the destructor).
  void close();

 private:
  void begin_event();
  std::FILE* file_ = nullptr;
  std::uint64_t events_ = 0;
};

// Track ids inside an SM's process, after the warps (tid = warp index).
inline constexpr int kTmaTrack = 1000;
inline constexpr int kBarrierTrack = 1001;
inline constexpr int kMmaTrack = 1002;

// JSON string literal (with quotes) for arbitrary text.
std::string json_quote(std::string_view s);

}  // namespace bwsim
