#pragma once
// The static persistent tile scheduler of CUTLASS's SM90/SM100 GEMMs: cluster c of a grid of C
// clusters takes work units c, c + C, c + 2C, ...; a work unit becomes an output tile (m, n) by
// the raster order and the swizzle. Along M, m moves fastest inside bands of `swizzle` columns
// of n (consecutive units walk the band's columns, then the next m); along N the roles swap.
// Bands keep the tiles running at once on a few columns of B (or rows of A), so their operands
// are reused from the L2.
#include <algorithm>
#include <cstdint>
#include <utility>

namespace bwsim {

enum class Raster : std::uint8_t { AlongM, AlongN };

struct TileScheduler {
  std::uint32_t tiles_m = 1, tiles_n = 1;
  Raster raster = Raster::AlongM;
  std::uint32_t swizzle = 1;  // 1, 2, 4 or 8

  std::uint32_t tiles() const { return tiles_m * tiles_n; }
  // (m, n) of work unit t < tiles().
  std::pair<std::uint32_t, std::uint32_t> tile(std::uint32_t t) const {
    const bool along_m = raster == Raster::AlongM;
    const std::uint32_t fast = along_m ? tiles_m : tiles_n;  // the dimension that moves fastest
    const std::uint32_t slow = along_m ? tiles_n : tiles_m;  // cut into bands of `swizzle`
    const std::uint32_t band = t / (fast * swizzle);
    const std::uint32_t width = std::min(swizzle, slow - band * swizzle);
    const std::uint32_t i = t - band * fast * swizzle;
    const std::uint32_t f = i / width, s = band * swizzle + i % width;
    return along_m ? std::pair{f, s} : std::pair{s, f};
  }
};

}  // namespace bwsim
