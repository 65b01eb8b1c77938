#include "bwsim/core/Stats.hpp"

#include <fmt/format.h>

namespace bwsim {
namespace {
std::string human_bytes(double b) {
  if (b >= 1 << 30) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.2f} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{:.0f} B", b);
}
}  // namespace

const char* unit_name(StatUnit unit) {
  switch (unit) {
    case StatUnit::Count: return "count";
    case StatUnit::Bytes: return "bytes";
    case StatUnit::Cycles: return "cycles";
    case StatUnit::Flop: return "FLOP";
    case StatUnit::Fraction: return "fraction";
    case StatUnit::GBytesPerSecond: return "GB/s";
    case StatUnit::TflopsPerSecond: return "TFLOP/s";
    case StatUnit::BytesPerCycle: return "B/cycle";
    case StatUnit::Seconds: return "s";
    case StatUnit::Microseconds: return "us";
    case StatUnit::EventsPerSecond: return "events/s";
  }
  return "?";
}

double as_double(const StatValue& v) {
  return std::holds_alternative<double>(v) ? std::get<double>(v) : static_cast<double>(std::get<std::uint64_t>(v));
}

bool is_zero(const StatValue& v) { return as_double(v) == 0.0; }

std::string format_value(StatUnit unit, const StatValue& v) {
  const double x = as_double(v);
  switch (unit) {
    case StatUnit::Count:
    case StatUnit::Cycles:
      return std::holds_alternative<double>(v) ? fmt::format("{:.4g}", x) : fmt::format("{}", std::get<std::uint64_t>(v));
    case StatUnit::Bytes: return human_bytes(x);
    case StatUnit::Flop: return fmt::format("{:.4g}", x);
    case StatUnit::Fraction: return fmt::format("{:.1f}%", 100.0 * x);
    case StatUnit::GBytesPerSecond: return fmt::format("{:.0f} GB/s", x);
    case StatUnit::TflopsPerSecond: return fmt::format("{:.1f} TFLOP/s", x);
    case StatUnit::BytesPerCycle: return fmt::format("{:.2f} B/cycle", x);
    case StatUnit::Seconds: return fmt::format("{:.3f} s", x);
    case StatUnit::Microseconds: return fmt::format("{:.3f} us", x);
    case StatUnit::EventsPerSecond: return fmt::format("{:.2f} M/s", x / 1e6);
  }
  return fmt::format("{}", x);
}

std::string StatInfo::group() const {
  const auto dot = name.find('.');
  return dot == std::string::npos ? std::string() : name.substr(0, dot);
}

std::string StatInfo::short_name() const {
  const auto dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

}  // namespace bwsim
