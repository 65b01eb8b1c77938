#include "bwsim/hw/memory/HbmModel.hpp"

#include "bwsim/hw/memory/HbmFifoLink.hpp"
#include "bwsim/hw/memory/HbmLoadedLink.hpp"

namespace bwsim {

const HbmModelRegistry& hbm_models() {
  static const HbmModelRegistry registry{
      "hbm.model",
      {{"fifo_link", "one link at hbm.gbytes_per_second in arrival order, plus a constant hbm.latency",
        [](const HardwareConfig& c, double share) -> std::unique_ptr<HbmModel> {
          if (c.hbm.loaded.present)
            throw ConfigError(c.source + ": hbm.loaded: only hbm.model loaded_link reads it (the model is fifo_link)");
          return std::make_unique<HbmFifoLink>(c, share);
        }},
       {"loaded_link", "fifo_link plus latency that grows with the HBM's recent load (section hbm.loaded)",
        [](const HardwareConfig& c, double share) -> std::unique_ptr<HbmModel> {
          return std::make_unique<HbmLoadedLink>(c, share);
        }}}};
  return registry;
}

}  // namespace bwsim
