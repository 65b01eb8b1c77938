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

Tracer::Tracer(const std::string& path, double clock_ghz) {
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
  fmt::print(file_, R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", pid, json_quote(name));
  begin_event();
  fmt::print(file_, R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid, pid);
}

void Tracer::thread_name(int pid, int tid, std::string_view name) {
  begin_event();
  fmt::print(file_, R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", pid, tid,
             json_quote(name));
  begin_event();
  fmt::print(file_, R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid,
             tid, tid);
}

void Tracer::span(int pid, int tid, std::string_view name, Cycle start, Cycle duration, std::string_view args) {
  begin_event();
  fmt::print(file_, R"({{"ph":"X","pid":{},"tid":{},"name":{},"ts":{},"dur":{},"args":{{{}}}}})", pid, tid,
             json_quote(name), start, duration, args);
}

void Tracer::instant(int pid, int tid, std::string_view name, Cycle at, std::string_view args) {
  begin_event();
  fmt::print(file_, R"({{"ph":"i","s":"t","pid":{},"tid":{},"name":{},"ts":{},"args":{{{}}}}})", pid, tid,
             json_quote(name), at, args);
}

void Tracer::counter(int pid, std::string_view name, Cycle at, double value) {
  begin_event();
  fmt::print(file_, R"({{"ph":"C","pid":{},"name":{},"ts":{},"args":{{"value":{}}}}})", pid, json_quote(name), at,
             value);
}

void Tracer::async_begin(int pid, std::string_view category, std::string_view name, std::uint64_t id, Cycle at,
                         std::string_view args) {
  begin_event();
  fmt::print(file_, R"({{"ph":"b","pid":{},"tid":{},"cat":{},"name":{},"id":{},"ts":{},"args":{{{}}}}})", pid,
             kTmaTrack, json_quote(category), json_quote(name), id, at, args);
}

void Tracer::async_end(int pid, std::string_view category, std::string_view name, std::uint64_t id, Cycle at) {
  begin_event();
  fmt::print(file_, R"({{"ph":"e","pid":{},"tid":{},"cat":{},"name":{},"id":{},"ts":{}}})", pid, kTmaTrack,
             json_quote(category), json_quote(name), id, at);
}

}  // namespace bwsim
