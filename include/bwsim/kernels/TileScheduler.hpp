#pragma once
// The tile scheduler of a persistent GEMM: which output tile each worker (a CTA, or a cluster of
// them) computes next. It is a kernel property, not hardware (CUTLASS compiles it into the
// kernel), so a kernel argument chooses it by name (--tile-scheduler), from tile_schedulers().
#include <cstdint>
#include <memory>
#include <utility>

#include "bwsim/core/Error.hpp"
#include "bwsim/core/ModelRegistry.hpp"

namespace bwsim {

enum class Raster : std::uint8_t { AlongM, AlongN };

// What a scheduler is built over: the output's tiles (per worker tile) and the order options.
struct TileGrid {
  std::uint32_t tiles_m = 1, tiles_n = 1;
  Raster raster = Raster::AlongM;
  std::uint32_t swizzle = 1;  // 1, 2, 4 or 8
};

class TileScheduler {
 public:
  virtual ~TileScheduler() = default;
  virtual std::uint32_t tiles() const = 0;  // work units: one output tile each
  // The `k`-th work unit of worker `worker` of `workers` (0, 1, ...); tiles() or more when it has
  // no more. Called once per tile per warp: a virtual call there costs nothing measurable.
  virtual std::uint32_t work_unit(std::uint32_t worker, std::uint32_t workers, std::uint32_t k) const = 0;
  // (m, n) of work unit t < tiles().
  virtual std::pair<std::uint32_t, std::uint32_t> tile(std::uint32_t t) const = 0;
};

// "static_persistent" (CUTLASS's PersistentTileSchedulerSm90 / Sm100): worker w of W takes work
// units w, w + W, w + 2W, ...; a work unit becomes an output tile (m, n) by the raster order and
// the swizzle. Along M, m moves fastest inside bands of `swizzle` columns of n (consecutive units
// walk the band's columns, then the next m); along N the roles swap. Bands keep the tiles running
// at once on a few columns of B (or rows of A), so their operands are reused from the L2.
class StaticPersistentScheduler final : public TileScheduler {
 public:
  explicit StaticPersistentScheduler(const TileGrid& grid) : grid_(grid) {}
  std::uint32_t tiles() const override { return grid_.tiles_m * grid_.tiles_n; }
  std::uint32_t work_unit(std::uint32_t worker, std::uint32_t workers, std::uint32_t k) const override {
    return worker + k * workers;
  }
  std::pair<std::uint32_t, std::uint32_t> tile(std::uint32_t t) const override;

 private:
  TileGrid grid_;
};

using TileSchedulerRegistry = ModelRegistry<InputError, std::unique_ptr<TileScheduler>, const TileGrid&>;
const TileSchedulerRegistry& tile_schedulers();  // "static_persistent"

}  // namespace bwsim
