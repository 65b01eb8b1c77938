#pragma once
// What timing mode cannot compute: when a row's running maximum grows. Attention's correction
// work (rescaling O) happens at a K/V tile only where a row's max grew there, by more than the
// rescale threshold when the kernel has one (FlashAttention-4 lets the max lag by up to 8 in
// log2 units, so the stale max stands and P may reach 2^8). Functional mode sees the scores;
// timing mode has none, so this model draws the rows' tile maxima from the scores of random
// inputs: i.i.d. normal scores s * softmax_scale with standard deviation `score_std` (1 for
// torch.randn Q and K, as attention benchmarks use), `keys` per row and tile.
//
// A row keeps the max it rescaled to last (m_ref). A tile exceeds m_ref + threshold with the same
// probability q at every tile (tile maxima are i.i.d.), so the tile of the next rescale is
// geometric in q and the new m_ref is a tile max conditioned to exceed: one draw per event, not
// per tile, so the cost grows with the rescales, not with the tiles.
//
// A unit's rescale tiles are all drawn when it starts (restart) and kept as a bitmap, which each
// tile's question reads: the correction warp asks once per K/V tile, long after its last look (in
// a full-chip run its state is then out of the host's caches), and a bitmap beside its length is
// one or two cache lines where the rows' state is ten. The draws are those the warp's questions
// at tiles 1, 2, ... in turn made: the same tiles are visited, the same rows in each, in the same
// order, from the one stream.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace bwsim {

class RowMaxModel {
 public:
  static constexpr std::uint32_t kMaxRows = 32;
  struct Params {
    std::uint32_t rows = 32;   // rows of one warp (at most kMaxRows): the correction decides per warp
    std::uint32_t keys = 128;  // scores per row and tile
    double score_std = 1.0;    // of s * softmax_scale (natural-log units)
    double threshold = 0.0;    // log2 units; 0: any growth rescales
  };
  explicit RowMaxModel(const Params& p);

  // Starts a unit of `tiles` K/V tiles over, with fresh maxima drawn from the stream `seed` (one
  // per work unit), and draws at which of its tiles any row rescales.
  void restart(std::uint64_t seed, std::uint32_t tiles);

  // Whether any row rescales at K/V tile `tile` of the unit (tile 0 sets the first maxima and
  // never rescales; tiles past the unit's never do).
  bool rescales(std::uint32_t tile) const {
    const std::uint64_t* bits = tiles_ <= kInlineTiles ? inline_.data() : more_.data();
    return tile < tiles_ && (bits[tile / 64] >> (tile % 64) & 1u);
  }

  // Standard normal quantile of the upper tail: z with P(Z > z) = tail, tail in (0, 1).
  static double upper_quantile(double tail);

 private:
  static constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kInlineTiles = 512;
  // The rows' state while a unit's rescales are drawn.
  struct Rows {
    std::array<std::uint32_t, kMaxRows> next;  // the tile of each row's next rescale
    std::array<double, kMaxRows> exceed;       // each row's q: P(a tile max > m_ref + threshold), set by draw_max()
    std::array<double, kMaxRows> m_ref;        // each row's max in standard units (with a threshold only)
    std::uint32_t soonest = kNever;
  };
  double uniform();                        // in (0, 1)
  double exceed_probability(double z) const;  // P(tile max > z), z in standard units
  double draw_above(double z, double q);   // a tile max conditioned on > z (q: its probability)
  // The row's new max, drawn above its max (q: P(a tile max exceeds it + threshold)); sets its q.
  void draw_max(Rows& rows, std::uint32_t row, double q);
  void schedule(Rows& rows, std::uint32_t row, std::uint32_t tile);  // the row's next rescale after `tile`, from its q

  Params p_;
  double threshold_z_;  // the threshold in standard units of the scores
  std::uint64_t state_ = 0;
  std::uint32_t tiles_ = 0;
  std::array<std::uint64_t, kInlineTiles / 64> inline_{};  // bit t: a rescale at tile t
  std::vector<std::uint64_t> more_;  // the same, for units of more tiles
};

}  // namespace bwsim
