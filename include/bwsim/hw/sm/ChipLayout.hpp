#pragma once
// Where each SM sits on the chip: its die, its GPC, its CPC and its TPC (2 SMs). SMs are numbered
// GPC by GPC, in the order the block scheduler fills the GPCs (a grid's consecutive CTAs share a
// GPC). The GPCs' sizes are sm.gpc_tpcs where a config measured them (floor-swept chips have GPCs
// of unequal size), and the die (L2 partition) of each GPC dies.of_gpc; otherwise each die has an
// equal share of the TPCs and of the GPCs, numbered die by die, and within a die the TPCs spread
// over its GPCs as evenly as they go, the first GPCs taking one more. A GPC's TPCs form CPCs of
// sm.tpcs_per_cpc in order, so a GPC short of TPCs has its last CPC short (0: one CPC per GPC),
// unless sm.tpc_cpcs names each TPC's CPC (the GH100's CPCs take every third TPC).
#include <cstdint>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"

namespace bwsim {

struct ChipLayout {
  std::vector<std::uint32_t> gpc_first;  // the first SM of each GPC
  std::vector<std::uint8_t> die;         // the die of each SM
  std::vector<std::uint32_t> gpc;        // the GPC of each SM
  std::vector<std::uint32_t> cpc;        // the CPC of each SM (numbered over the chip, GPC by GPC)
  std::uint32_t gpcs() const { return static_cast<std::uint32_t>(gpc_first.size()); }
  std::uint32_t gpc_end(std::uint32_t gpc) const {  // one past the GPC's last SM
    return gpc + 1 < gpc_first.size() ? gpc_first[gpc + 1] : static_cast<std::uint32_t>(die.size());
  }
  std::uint32_t gpc_sms(std::uint32_t gpc) const { return gpc_end(gpc) - gpc_first[gpc]; }
};

ChipLayout chip_layout(const HardwareConfig& config);

}  // namespace bwsim
