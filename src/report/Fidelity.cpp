#include "bwsim/report/Fidelity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace bwsim {
namespace {

bool is_integer(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// `value` times `factor`: an integer stays one, at least 1 away from `value` (and not below 0).
std::string scaled(const std::string& value, double factor) {
  const double v = std::stod(value);
  if (!is_integer(value)) return fmt::format("{:.6g}", v * factor);
  const auto base = static_cast<long long>(v);
  long long x = std::llround(v * factor);
  if (x == base) x = base + (factor > 1 ? 1 : -1);
  return std::to_string(std::max(0LL, x));
}

Cycle run_cycles(const KernelInfo& kernel, const HardwareConfig& config, const SimOptions& options,
                 const KernelArgs& args) {
  return kernel.run(KernelRequest{config, options, args, false}).run.cycles;
}

}  // namespace

double Sensitivity::half_range() const { return std::fabs(high_change - low_change) / 2; }

FidelityReport fidelity(const KernelInfo& kernel, const std::string& config_path,
                        const std::vector<std::string>& overrides, const SimOptions& options, const KernelArgs& args,
                        const std::vector<std::string>& only) {
  const HardwareConfig base = load_config(config_path, overrides);
  if (base.uncertainty.keys.empty())
    throw InputError(fmt::format("{}: the config has no uncertainty section listing its values' provenance, so there "
                                 "is nothing to vary",
                                 config_path));
  std::vector<HardwareConfig::Uncertainty::Listed> keys;
  for (const auto& listed : base.uncertainty.keys)
    if (only.empty() || std::find(only.begin(), only.end(), listed.key) != only.end()) keys.push_back(listed);
  for (const std::string& key : only)
    if (std::none_of(keys.begin(), keys.end(), [&](const auto& listed) { return listed.key == key; }))
      throw InputError(fmt::format("--values: '{}' is not listed in {}'s uncertainty section", key, config_path));
  FidelityReport report;
  report.base_cycles = run_cycles(kernel, base, options, args);
  const double base_cycles = static_cast<double>(report.base_cycles);
  double total = 0, borrowed = 0;
  for (const auto& [key, tag, value] : keys) {
    Sensitivity s{key, tag, base.uncertainty.band(tag), value};
    s.low = scaled(s.value, 1 - s.band);
    s.high = scaled(s.value, 1 + s.band);
    for (const bool high : {false, true}) {
      std::vector<std::string> set = overrides;
      set.push_back(key + "=" + (high ? s.high : s.low));
      const HardwareConfig varied = load_config(config_path, set);
      const Cycle c = run_cycles(kernel, varied, options, args);
      (high ? s.high_cycles : s.low_cycles) = c;
      (high ? s.high_change : s.low_change) = (static_cast<double>(c) - base_cycles) / base_cycles;
    }
    total += s.half_range() * s.half_range();
    if (tag == "H100" || tag == "E") borrowed += s.half_range() * s.half_range();
    report.rows.push_back(std::move(s));
  }
  std::stable_sort(report.rows.begin(), report.rows.end(),
                   [](const Sensitivity& a, const Sensitivity& b) { return a.half_range() > b.half_range(); });
  report.uncertainty = std::sqrt(total);
  report.borrowed_or_estimated_share = total > 0 ? borrowed / total : 0;
  return report;
}

std::string fidelity_text(const FidelityReport& r) {
  std::string out = fmt::format("{:<36} {:>4} {:>5} {:>10} {:>10} {:>10} {:>8} {:>8}\n", "value", "tag", "band",
                                "config", "low", "high", "low", "high");
  for (const Sensitivity& s : r.rows)
    out += fmt::format("{:<36} {:>4} {:>4.0f}% {:>10} {:>10} {:>10} {:>+7.2f}% {:>+7.2f}%\n", s.key, s.tag,
                       100 * s.band, s.value, s.low, s.high, 100 * s.low_change, 100 * s.high_change);
  out += fmt::format(
      "cycles    {} at the config's values; uncertainty +-{:.1f}% (root sum of squares of each value's half-range, "
      "the values taken as independent), {:.0f}% of its square from values borrowed from the H100 or estimated\n",
      r.base_cycles, 100 * r.uncertainty, 100 * r.borrowed_or_estimated_share);
  return out;
}

}  // namespace bwsim
