#include "bwsim/kernels/GemmSm90Compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "bwsim/core/Csv.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernel/StatRegistry.hpp"
#include "bwsim/kernels/GemmSm90.hpp"

namespace bwsim {
namespace {

constexpr const char* kColumns[] = {"m",     "n",       "k",    "schedule", "rows_per_wg", "tile_n", "stages", "raster",
                                    "swizzle", "grid", "cycles", "clock_mhz", "span_ns", "event_ns", "tflops", "check"};
constexpr std::size_t kFields = std::size(kColumns);

// A row of the tolerances CSV.
struct RowTolerance {
  std::string shape, variant;
  double tolerance = 0.10;
  std::uint32_t draws = 1;
  std::string reason;
};

}  // namespace

bool is_gemm_sm90_csv(const std::string& path) {
  const auto header = read_csv_header(path);
  return header.size() == kFields && header[0] == "m" && header[3] == "schedule";
}

std::vector<KernelComparison> compare_gemm_sm90_with_hardware(const HardwareConfig& config,
                                                              const std::string& measured_csv,
                                                              const std::string& tolerances_csv) {
  if (!is_gemm_sm90_csv(measured_csv))
    throw InputError(fmt::format("{}: not a gemm_sm90 CSV (header m,n,k,schedule,...)", measured_csv));
  std::vector<RowTolerance> tolerances;
  if (!tolerances_csv.empty())
    for (const auto& t : read_csv_rows(tolerances_csv, 5)) {
      const double tol = std::strtod(t[2].c_str(), nullptr);
      if (!(tol > 0 && tol < 10)) throw InputError(fmt::format("{}: tolerance '{}': a fraction such as 0.15", t[5], t[2]));
      tolerances.push_back({t[0], t[1], tol, static_cast<std::uint32_t>(parse_integer(t[3], t[5] + " draws", 1, 99)), t[4]});
    }
  std::vector<KernelComparison> out;
  for (const auto& row : read_csv_rows(measured_csv, kFields)) {
    std::map<std::string, std::string> f;
    for (std::size_t i = 0; i < kFields; ++i) f[kColumns[i]] = row[i];
    const std::string& where = row[kFields];
    auto integer = [&](const char* col, std::uint64_t lo, std::uint64_t hi) {
      return parse_integer(f[col], fmt::format("{} {}", where, col), lo, hi);
    };
    GemmSm90Params p;
    p.m = static_cast<std::uint32_t>(integer("m", 1, 1u << 20));
    p.n = static_cast<std::uint32_t>(integer("n", 1, 1u << 20));
    p.k = static_cast<std::uint32_t>(integer("k", 1, 1u << 20));
    if (f["schedule"] != "cooperative" && f["schedule"] != "pingpong")
      throw InputError(fmt::format("{}: schedule '{}' is not cooperative or pingpong", where, f["schedule"]));
    p.schedule = f["schedule"] == "pingpong" ? Sm90Schedule::Pingpong : Sm90Schedule::Cooperative;
    p.rows_per_wg = static_cast<std::uint32_t>(integer("rows_per_wg", 64, 128));
    p.tile_n = static_cast<std::uint32_t>(integer("tile_n", 64, 256));
    p.stages = static_cast<std::uint32_t>(integer("stages", 1, 16));
    p.raster = f["raster"] == "n" ? Raster::AlongN : Raster::AlongM;
    p.swizzle = static_cast<std::uint32_t>(integer("swizzle", 1, 8));
    p.grid = static_cast<std::uint32_t>(integer("grid", 1, 1u << 16));
    p.warmup = 1;
    KernelComparison c;
    c.measured = static_cast<std::int64_t>(integer("cycles", 1, 1ull << 40));
    c.clock_mhz = static_cast<double>(integer("clock_mhz", 100, 5000));
    HardwareConfig at_clock = config;
    at_clock.clock_ghz = c.clock_mhz / 1000.0;
    c.shape = fmt::format("{}x{}x{}", p.m, p.n, p.k);
    c.variant = fmt::format("{} {}x{}, {} stages, grid {}, raster {}, swizzle {}", f["schedule"], gemm_sm90_tile_m(p),
                            p.tile_n, p.stages, p.grid, f["raster"], p.swizzle);
    std::string key = c.variant;  // the variant without its commas (the CSV's separator)
    std::erase(key, ',');
    for (const RowTolerance& t : tolerances)
      // The tolerance's variant is a prefix of whole words ("grid 32" is not "grid 320").
      if (t.shape == c.shape && key.rfind(t.variant, 0) == 0 &&
          (key.size() == t.variant.size() || key[t.variant.size()] == ' ')) {
        c.tolerance = t.tolerance;
        c.draws = t.draws;
        c.reason = t.reason;
        break;
      }
    // One deterministic launch, or (a chaotic row) the upper median of `draws` launches after the
    // warm-up, each its own draw, as the twin reports the upper median of its timed launches.
    p.draws = c.draws;
    const GemmSm90Result r = run_gemm_sm90(at_clock, SimOptions{.mode = Mode::Timing, .check_races = false}, p, false);
    c.predicted = static_cast<std::int64_t>(r.span);
    c.predicted_low = static_cast<std::int64_t>(r.span_low());
    c.predicted_high = static_cast<std::int64_t>(r.span_high());
    c.error = static_cast<double>(c.predicted - c.measured) / static_cast<double>(c.measured);
    c.busy = critical_path(r.run);
    out.push_back(std::move(c));
  }
  return out;
}

double mean_absolute_error(const std::vector<KernelComparison>& rows) {
  double sum = 0;
  for (const KernelComparison& r : rows) sum += std::fabs(r.error);
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
}

}  // namespace bwsim
