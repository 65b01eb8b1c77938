#include "bwsim/power/PowerReport.hpp"

#include <fmt/format.h>

#include <cmath>

#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/power/PowerModel.hpp"

namespace bwsim {

nlohmann::json power_json(const RunResult& run, const HardwareConfig& config, double sustained_seconds) {
  if (config.power.limit_w <= 0) return nullptr;
  const KernelEnergy e = energy_of(run, config);
  const PowerModel model(config.power);
  const double ghz = model.start_clock_ghz(e), watts = model.power_w(e, ghz);
  const double us = static_cast<double>(run.cycles) / (ghz * 1e3);
  nlohmann::json j{{"clock_ghz", ghz}, {"power_w", watts}, {"time_us", us}, {"energy_mj", watts * us * 1e-3}};
  if (const std::vector<WindowPower> windows = window_power(run, config, ghz); windows.size() > 1) {
    nlohmann::json trace = nlohmann::json::array();
    double peak = 0;
    for (const WindowPower& w : windows) {
      trace.push_back({static_cast<double>(w.begin) / (ghz * 1e3), w.power_w});
      peak = std::max(peak, w.power_w);
    }
    j["peak_power_w"] = peak;
    j["window_us"] = static_cast<double>(windows.front().end - windows.front().begin) / (ghz * 1e3);
    j["windows"] = trace;  // [start us, W] per window
  }
  if (sustained_seconds > 0) {
    const SustainedRun s = sustain(e, config.power, sustained_seconds);
    nlohmann::json trace = nlohmann::json::array();
    const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(100.0 / config.power.period_ms)));
    for (std::size_t i = 0; i < s.trace.size(); i += every)
      trace.push_back({s.trace[i].t_s, s.trace[i].clock_ghz, s.trace[i].power_w});
    j["sustained"] = {{"seconds", s.seconds},
                      {"kernels", s.kernels},
                      {"clock_ghz", s.clock_ghz},
                      {"power_w", s.power_w},
                      {"kernel_us", s.kernel_seconds * 1e6},
                      {"cycles_per_kernel", run.cycles},
                      {"peak_power_w", s.peak_power_w},
                      {"seconds_at_start_clock", s.seconds_at_start_clock},
                      {"seconds_limited", s.seconds_limited},
                      {"clock_trace", trace}};
  }
  return j;
}

std::string power_text(const nlohmann::json& p) {
  if (p.is_null()) return {};
  std::string s = fmt::format("power     {:.0f} W at {:.3f} GHz (the start clock): {:.3f} us, {:.3f} mJ\n",
                              p["power_w"].get<double>(), p["clock_ghz"].get<double>(), p["time_us"].get<double>(),
                              p["energy_mj"].get<double>());
  if (p.contains("peak_power_w"))
    s += fmt::format("          peak {:.0f} W over {:.1f} us windows ({} windows)\n", p["peak_power_w"].get<double>(),
                     p["window_us"].get<double>(), p["windows"].size());
  if (p.contains("sustained")) {
    const auto& q = p["sustained"];
    s += fmt::format(
        "sustained {:.1f} s back to back: {:.3f} GHz, {:.0f} W (peak {:.0f}), {:.3f} us per kernel; "
        "{:.2f} s at the start clock, {:.2f} s under the limit\n",
        q["seconds"].get<double>(), q["clock_ghz"].get<double>(), q["power_w"].get<double>(),
        q["peak_power_w"].get<double>(), q["kernel_us"].get<double>(), q["seconds_at_start_clock"].get<double>(),
        q["seconds_limited"].get<double>());
  }
  return s;
}

}  // namespace bwsim
