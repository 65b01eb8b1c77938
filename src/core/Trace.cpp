#include "bwsim/core/Trace.hpp"

#include <fmt/format.h>

#include "bwsim/core/Error.hpp"

namespace bwsim {

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(ch));
        else
          out += ch;
    }
  }
  return out + "\"";
}

std::uint32_t parse_trace_kinds(std::string_view list) {
  static constexpr std::pair<std::string_view, std::uint32_t> kNames[] = {
      {"warps", kTraceWarps}, {"tma", kTraceTma},     {"mma", kTraceMma},
      {"barriers", kTraceBarriers}, {"flows", kTraceFlows}, {"counters", kTraceCounters}};
  std::uint32_t kinds = 0;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    bool found = false;
    for (const auto& [name, bit] : kNames)
      if (item == name) {
        kinds |= bit;
        found = true;
      }
    if (!found)
      throw InputError(fmt::format("--trace-kinds: unknown kind '{}'; use warps, tma, mma, barriers, flows, counters", item));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return kinds;
}

Tracer::Tracer(const std::string& path, double clock_ghz, TraceFilter filter) : filter_(filter) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw InputError(fmt::format("cannot open trace file '{}' for writing", path));
  fmt::print(file_,
             "{{\"otherData\":{{\"time_unit\":\"1 trace microsecond = 1 SM cycle\",\"clock_ghz\":{}}},"
             "\"traceEvents\":[\n",
             clock_ghz);
}

Tracer::~Tracer() { close(); }

void Tracer::close() {
  if (!file_) return;
  fmt::print(file_, "\n]}}\n");
  std::fclose(file_);
  file_ = nullptr;
}

void Tracer::begin_event() {
  if (events_++ != 0) std::fputs(",\n", file_);
}

void Tracer::process_name(int pid, std::string_view name) {
  begin_event();
  fmt::print(file_, R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"ts":0,"args":{{"name":{}}}}})", pid,
             json_quote(name));
  begin_event();
  fmt::print(file_, R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"ts":0,"args":{{"sort_index":{}}}}})",
             pid, pid);
}

void Tracer::thread_name(int pid, int tid, std::string_view name) {
  begin_event();
  fmt::print(file_, R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"ts":0,"args":{{"name":{}}}}})", pid, tid,
             json_quote(name));
  begin_event();
  fmt::print(file_, R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"ts":0,"args":{{"sort_index":{}}}}})",
             pid, tid, tid);
}

// The track's kind must be kept and [start, end] must meet the window. Warp tracks and the CTA
// track are the "warps" kind.
bool Tracer::keeps(int tid, Cycle start, Cycle end) const {
  const std::uint32_t kind = tid == kTmaTrack                          ? kTraceTma
                             : tid == kMmaTrack || tid == kTmemTrack ? kTraceMma
                             : tid == kBarrierTrack ? kTraceBarriers
                                                    : kTraceWarps;
  return (filter_.kinds & kind) && end >= filter_.window_begin && start <= filter_.window_end;
}

void Tracer::span(int pid, int tid, std::string_view name, Cycle start, Cycle duration, std::string_view args) {
  if (!keeps(tid, start, start + duration)) return;
  begin_event();
  fmt::print(file_, R"({{"ph":"X","pid":{},"tid":{},"name":{},"ts":{},"dur":{},"args":{{{}}}}})", pid, tid,
             json_quote(name), start, duration, args);
}

void Tracer::instant(int pid, int tid, std::string_view name, Cycle at, std::string_view args) {
  if (!keeps(tid, at, at)) return;
  begin_event();
  fmt::print(file_, R"({{"ph":"i","s":"t","pid":{},"tid":{},"name":{},"ts":{},"args":{{{}}}}})", pid, tid,
             json_quote(name), at, args);
}

void Tracer::counter(int pid, std::string_view name, Cycle at, double value) {
  if (!(filter_.kinds & kTraceCounters) || at < filter_.window_begin || at > filter_.window_end) return;
  begin_event();
  fmt::print(file_, R"({{"ph":"C","pid":{},"tid":0,"name":{},"ts":{},"args":{{"value":{}}}}})", pid, json_quote(name),
             at, value);
}

void Tracer::flow(int from_pid, int from_tid, Cycle from, int to_pid, int to_tid, Cycle to, std::string_view name) {
  if (!(filter_.kinds & kTraceFlows) || !keeps(from_tid, from, from) || !keeps(to_tid, to, to)) return;
  const std::uint64_t id = next_flow_++;
  begin_event();
  fmt::print(file_, R"({{"ph":"s","cat":"flow","name":{},"id":{},"pid":{},"tid":{},"ts":{}}})", json_quote(name), id,
             from_pid, from_tid, from);
  begin_event();
  fmt::print(file_, R"({{"ph":"f","bp":"e","cat":"flow","name":{},"id":{},"pid":{},"tid":{},"ts":{}}})",
             json_quote(name), id, to_pid, to_tid, to);
}

void Tracer::async_span(int pid, std::string_view category, std::string_view name, std::uint64_t id, Cycle begin,
                        Cycle end, std::string_view args) {
  const int track = category == "mma" ? kMmaTrack : kTmaTrack;
  if (!keeps(track, begin, end)) return;
  begin_event();
  fmt::print(file_, R"({{"ph":"b","pid":{},"tid":{},"cat":{},"name":{},"id":{},"ts":{},"args":{{{}}}}})", pid, track,
             json_quote(category), json_quote(name), id, begin, args);
  begin_event();
  fmt::print(file_, R"({{"ph":"e","pid":{},"tid":{},"cat":{},"name":{},"id":{},"ts":{}}})", pid, track,
             json_quote(category), json_quote(name), id, end);
}

}  // namespace bwsim
