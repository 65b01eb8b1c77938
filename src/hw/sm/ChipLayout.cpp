#include "bwsim/hw/sm/ChipLayout.hpp"

#include <algorithm>
#include <vector>

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
}  // namespace

ChipLayout chip_layout(const HardwareConfig& config) {
  const std::uint32_t n = config.sm.count, per_die = config.sm.gpcs / config.dies.count;
  ChipLayout layout;
  layout.die.resize(n);
  std::uint32_t sm = 0, g = 0;
  for (const std::uint32_t tpcs : gpc_tpcs(config)) {
    layout.gpc_first.push_back(sm);
    const std::uint32_t end = std::min(n, sm + 2 * tpcs);
    const std::uint32_t die = config.dies.of_gpc.empty() ? g / per_die : config.dies.of_gpc[g];
    std::fill(layout.die.begin() + sm, layout.die.begin() + end, static_cast<std::uint8_t>(die));
    sm = end;
    ++g;
  }
  layout.cpc.resize(n);
  for (std::uint32_t gpc = 0, cpc = 0; gpc < layout.gpcs(); ++gpc) {
    const std::uint32_t first = layout.gpc_first[gpc], sms = layout.gpc_sms(gpc);
    const std::uint32_t per = config.sm.tpcs_per_cpc ? 2 * config.sm.tpcs_per_cpc : std::max(sms, 1u);
    for (std::uint32_t s = 0; s < sms; ++s) layout.cpc[first + s] = cpc + s / per;
    cpc += (sms + per - 1) / per;
  }
  return layout;
}

}  // namespace bwsim
