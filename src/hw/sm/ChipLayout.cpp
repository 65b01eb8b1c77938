#include "bwsim/hw/sm/ChipLayout.hpp"

#include <algorithm>

namespace bwsim {

ChipLayout chip_layout(const HardwareConfig& config) {
  const std::uint32_t n = config.sm.count, tpcs = (n + 1) / 2, dies = config.dies.count;
  const std::uint32_t gpcs_per_die = config.sm.gpcs / dies;  // the config checks it divides
  ChipLayout layout;
  layout.die.resize(n);
  std::uint32_t sm = 0;
  for (std::uint32_t d = 0; d < dies; ++d) {
    const std::uint32_t die_tpcs = tpcs / dies + (d < tpcs % dies ? 1 : 0);
    const std::uint32_t die_first = sm;
    for (std::uint32_t i = 0; i < gpcs_per_die; ++i) {
      layout.gpc_first.push_back(sm);
      sm = std::min(n, sm + 2 * (die_tpcs / gpcs_per_die + (i < die_tpcs % gpcs_per_die ? 1 : 0)));
    }
    std::fill(layout.die.begin() + die_first, layout.die.begin() + sm, static_cast<std::uint8_t>(d));
  }
  layout.cpc.resize(n);
  for (std::uint32_t g = 0, cpc = 0; g < layout.gpcs(); ++g) {
    const std::uint32_t first = layout.gpc_first[g], sms = layout.gpc_sms(g);
    const std::uint32_t per = config.sm.tpcs_per_cpc ? 2 * config.sm.tpcs_per_cpc : std::max(sms, 1u);
    for (std::uint32_t s = 0; s < sms; ++s) layout.cpc[first + s] = cpc + s / per;
    cpc += (sms + per - 1) / per;
  }
  return layout;
}

}  // namespace bwsim
