#include "bwsim/kernels/TileScheduler.hpp"

#include <algorithm>

namespace bwsim {

std::pair<std::uint32_t, std::uint32_t> StaticPersistentScheduler::tile(std::uint32_t t) const {
  const bool along_m = grid_.raster == Raster::AlongM;
  const std::uint32_t fast = along_m ? grid_.tiles_m : grid_.tiles_n;  // the dimension that moves fastest
  const std::uint32_t slow = along_m ? grid_.tiles_n : grid_.tiles_m;  // cut into bands of `swizzle`
  const std::uint32_t swizzle = grid_.swizzle;
  const std::uint32_t band = t / (fast * swizzle);
  const std::uint32_t width = std::min(swizzle, slow - band * swizzle);
  const std::uint32_t i = t - band * fast * swizzle;
  const std::uint32_t f = i / width, s = band * swizzle + i % width;
  return along_m ? std::pair{f, s} : std::pair{s, f};
}

const TileSchedulerRegistry& tile_schedulers() {
  static const TileSchedulerRegistry registry{
      "--tile-scheduler",
      {{"static_persistent", "worker w of W takes units w, w + W, ...; raster order and swizzle make them tiles",
        [](const TileGrid& g) -> std::unique_ptr<TileScheduler> { return std::make_unique<StaticPersistentScheduler>(g); }}}};
  return registry;
}

}  // namespace bwsim
