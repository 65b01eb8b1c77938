#include "bwsim/hw/memory/HbmModel.hpp"

#include "bwsim/hw/memory/HbmFifoLink.hpp"

namespace bwsim {

const HbmModelRegistry& hbm_models() {
  static const HbmModelRegistry registry{
      "hbm.model",
      {{"fifo_link", "one link at hbm.gbytes_per_second in arrival order, plus a constant hbm.latency",
        [](const HardwareConfig& c, double share) -> std::unique_ptr<HbmModel> {
          return std::make_unique<HbmFifoLink>(c, share);
        }}}};
  return registry;
}

}  // namespace bwsim
