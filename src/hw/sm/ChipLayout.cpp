#include "bwsim/hw/sm/ChipLayout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "bwsim/core/Error.hpp"

namespace bwsim {

namespace {
// The TPCs of each GPC in SM order: the config's list, or the even spread (die by die, a die's
// first GPCs taking one more).
std::vector<std::uint32_t> gpc_tpcs(const HardwareConfig& config) {
  if (!config.sm.gpc_tpcs.empty()) return config.sm.gpc_tpcs;
  const std::uint32_t tpcs = (config.sm.count + 1) / 2, dies = config.dies.count, per_die = config.sm.gpcs / dies;
  std::vector<std::uint32_t> out;
  for (std::uint32_t d = 0; d < dies; ++d) {
    const std::uint32_t die_tpcs = tpcs / dies + (d < tpcs % dies ? 1 : 0);
    for (std::uint32_t i = 0; i < per_die; ++i) out.push_back(die_tpcs / per_die + (i < die_tpcs % per_die ? 1 : 0));
  }
  return out;
}

// The die of each GPC: dies.of_gpc (with more than one die), or the GPCs split die by die.
std::vector<std::uint32_t> gpc_dies(const HardwareConfig& config) {
  if (config.dies.count > 1 && !config.dies.of_gpc.empty()) return config.dies.of_gpc;
  const std::uint32_t per_die = std::max(1u, config.sm.gpcs / config.dies.count);
  std::vector<std::uint32_t> out(config.sm.gpcs);
  for (std::uint32_t g = 0; g < config.sm.gpcs; ++g) out[g] = g / per_die;
  return out;
}
}  // namespace

ChipLayout chip_layout(const HardwareConfig& config) {
  const std::uint32_t n = config.sm.count;
  const std::vector<std::uint32_t> tpcs_of_gpc = gpc_tpcs(config), die_of_gpc = gpc_dies(config);
  // The config's checks hold these for a loaded file; a config changed in code may not fit its lists.
  if (tpcs_of_gpc.size() != config.sm.gpcs ||
      std::accumulate(tpcs_of_gpc.begin(), tpcs_of_gpc.end(), 0u) != (n + 1) / 2)
    throw ConfigError(fmt::format("{}: the GPCs' TPCs (sm.gpc_tpcs or the even spread) do not make {} GPCs of {} SMs",
                                  config.source, config.sm.gpcs, n));
  if (!config.sm.tpc_cpcs.empty() && config.sm.tpc_cpcs.size() != (n + 1) / 2)
    throw ConfigError(fmt::format("{}: sm.tpc_cpcs does not name the CPC of each of the chip's {} TPCs", config.source,
                                  (n + 1) / 2));
  if (die_of_gpc.size() != config.sm.gpcs ||
      std::any_of(die_of_gpc.begin(), die_of_gpc.end(), [&](std::uint32_t d) { return d >= config.dies.count; }))
    throw ConfigError(fmt::format("{}: dies.of_gpc does not describe {} GPCs on {} dies", config.source, config.sm.gpcs,
                                  config.dies.count));
  ChipLayout layout;
  layout.die.resize(n);
  layout.gpc.resize(n);
  for (std::uint32_t g = 0, sm = 0; g < config.sm.gpcs; ++g) {
    layout.gpc_first.push_back(sm);
    const std::uint32_t end = std::min(n, sm + 2 * tpcs_of_gpc[g]);
    std::fill(layout.die.begin() + sm, layout.die.begin() + end, static_cast<std::uint8_t>(die_of_gpc[g]));
    std::fill(layout.gpc.begin() + sm, layout.gpc.begin() + end, g);
    sm = end;
  }
  // Each SM's CPC within its GPC (sm.tpc_cpcs, or tpcs_per_cpc TPCs in order), then numbered over
  // the chip, GPC by GPC.
  layout.cpc.resize(n);
  for (std::uint32_t gpc = 0, cpc = 0; gpc < layout.gpcs(); ++gpc) {
    const std::uint32_t first = layout.gpc_first[gpc], sms = layout.gpc_sms(gpc);
    const std::uint32_t per = config.sm.tpcs_per_cpc ? 2 * config.sm.tpcs_per_cpc : std::max(sms, 1u);
    std::uint32_t cpcs = 0;
    for (std::uint32_t s = 0; s < sms; ++s) {
      const std::uint32_t local = config.sm.tpc_cpcs.empty() ? s / per : config.sm.tpc_cpcs[(first + s) / 2];
      layout.cpc[first + s] = cpc + local;
      cpcs = std::max(cpcs, local + 1);
    }
    cpc += cpcs;
  }
  return layout;
}

}  // namespace bwsim
