#include "bwsim/hw/memory/MemorySystem.hpp"

#include <algorithm>

#include "bwsim/hw/memory/TensorCopy.hpp"

namespace bwsim {

namespace {
constexpr std::uint32_t kBlockRows = 8;  // rows of one residency block (see L2Policy)
}

const StatGroup<MemoryStats>& MemoryStats::declared() {
  static const StatGroup<MemoryStats> group = [] {
    StatGroup<MemoryStats> g("memory");
    g.counter("l2_read_bytes", StatUnit::Bytes, "bytes TMA loads read from the L2 (a multicast load once)",
              &MemoryStats::l2_read_bytes)
        .counter("l2_hit_bytes", StatUnit::Bytes, "of l2_read_bytes, those found in the L2", &MemoryStats::l2_hit_bytes)
        .counter("l2_coalesced_bytes", StatUnit::Bytes,
                 "of l2_read_bytes, those that joined a transfer in flight to another SM (no link bandwidth)",
                 &MemoryStats::l2_coalesced_bytes)
        .formula("l2_hit_rate", StatUnit::Fraction, "l2_hit_bytes over l2_read_bytes",
                 [](const MemoryStats& m, const StatContext&) -> StatValue { return m.l2_hit_rate(); })
        .counter("l2_write_bytes", StatUnit::Bytes, "bytes TMA stores wrote to the L2", &MemoryStats::l2_write_bytes)
        .formula("l2_gbytes_per_second", StatUnit::GBytesPerSecond,
                 "l2_read_bytes + l2_write_bytes per second at the config's clock",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue {
                   return c.per_second(static_cast<double>(m.l2_read_bytes + m.l2_write_bytes), 1e9);
                 })
        .counter("l2_busy_cycles", StatUnit::Cycles, "cycles the L2-to-SM link spent moving bytes",
                 &MemoryStats::l2_busy_cycles)
        .formula("l2_busy_fraction", StatUnit::Fraction, "l2_busy_cycles over the run's cycles",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue { return c.busy_fraction(m.l2_busy_cycles); },
                 {"L2 link", "L2-bandwidth"})
        .counter("hbm_read_bytes", StatUnit::Bytes, "bytes read from HBM: L2 misses of loads and prefetches",
                 &MemoryStats::hbm_read_bytes)
        .counter("hbm_write_bytes", StatUnit::Bytes, "bytes written through to HBM by stores",
                 &MemoryStats::hbm_write_bytes)
        .formula("hbm_gbytes_per_second", StatUnit::GBytesPerSecond,
                 "hbm_read_bytes + hbm_write_bytes per second at the config's clock",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue {
                   return c.per_second(static_cast<double>(m.hbm_read_bytes + m.hbm_write_bytes), 1e9);
                 })
        .counter("hbm_busy_cycles", StatUnit::Cycles, "cycles the HBM link spent moving bytes",
                 &MemoryStats::hbm_busy_cycles)
        .formula("hbm_busy_fraction", StatUnit::Fraction, "hbm_busy_cycles over the run's cycles",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue { return c.busy_fraction(m.hbm_busy_cycles); },
                 {"HBM", "HBM-bandwidth"});
    return g;
  }();
  return group;
}

MemorySystem::MemorySystem(const HardwareConfig& config)
    : config_(config),
      l2_(l2_policies().at(config.l2.policy, config.source).make(
          std::max<std::uint64_t>(1, config.l2.bytes / (config.l2.line_bytes * kBlockRows)))),
      hbm_(hbm_models().at(config.hbm.model, config.source).make(config)),
      l2_link_(config.l2.gbytes_per_second / config.clock_ghz),
      delivery_link_(config.l2.delivery_gbytes_per_second / config.clock_ghz) {}

void MemorySystem::begin_launch(Tracer* tracer, int pid) {
  l2_->clear_in_flight();
  l2_link_.reset();
  delivery_link_.reset();
  hbm_->reset();
  stats_ = {};
  tracer_ = tracer;
  pid_ = pid;
  l2_counter_ = WindowCounter{l2_counter_.name};
  hbm_counter_ = WindowCounter{hbm_counter_.name};
  if (tracer_) tracer_->process_name(pid_, "L2 and HBM (chip)");
}

void MemorySystem::end_launch() {
  if (tracer_) {
    l2_counter_.flush(*this);
    hbm_counter_.flush(*this);
  }
  tracer_ = nullptr;
}

// The window's bytes as GB/s: bytes per cycle x clock_ghz.
void MemorySystem::WindowCounter::flush(MemorySystem& m) {
  m.tracer_->counter(m.pid_, name, window,
                     static_cast<double>(bytes) * m.config_.clock_ghz / static_cast<double>(kCounterWindow));
  bytes = 0;
}

void MemorySystem::WindowCounter::add(MemorySystem& m, Cycle at, std::uint64_t n) {
  if (!m.tracer_ || n == 0) return;
  if (at >= window + kCounterWindow) {
    flush(m);
    const Cycle next = at / kCounterWindow * kCounterWindow;
    if (next > window + kCounterWindow) m.tracer_->counter(m.pid_, name, window + kCounterWindow, 0);  // idle windows
    window = next;
  }
  bytes += n;
}

// The blocks of a box: for every group of 8 rows of dimension 1 (and every index of the higher
// dimensions) the 128-byte lines its innermost extent covers, keyed by their GMEM address.
// Blocks wholly outside the tensor are not fetched (TMA fills them without reading memory).
// With `promote`, the lines of the map's L2 promotion granules that the box's lines lie in are
// touched too; those that miss are fetched beside the box and are in flight with it (a granule
// wider than a line: 256B promotion with 128-byte lines).
MemorySystem::Touched MemorySystem::touch(const TensorMap& map, const TensorCoords& c, bool promote, Cycle at,
                                          std::vector<Cycle*>* fresh) {
  const std::uint64_t line = config_.l2.line_bytes;
  const std::uint64_t esize = size_of(map.dtype());
  const std::int64_t lo0 = std::max<std::int64_t>(c[0], 0);
  const std::int64_t hi0 = std::min<std::int64_t>(
      static_cast<std::int64_t>(c[0]) + static_cast<std::int64_t>(map.box(0)), static_cast<std::int64_t>(map.dim(0)));
  if (hi0 <= lo0) return {};
  const std::uint64_t first_line = static_cast<std::uint64_t>(lo0) * esize / line;
  const std::uint64_t last_line = (static_cast<std::uint64_t>(hi0) * esize - 1) / line;
  // Promotion widens each row's fetch when rows lie a granule or more apart; a granule spanning
  // several rows of a denser tensor is mostly the box's own rows (not modeled beyond them).
  const std::uint64_t promoted = promote ? promotion_bytes(map.l2_promotion()) : 0;
  const std::uint64_t granule = map.rank() > 1 && map.stride(1) >= promoted ? std::max(line, promoted) : line;
  // Row-group ranges per dimension >= 1 (dimension 1 in groups of 8 rows).
  std::array<std::int64_t, kMaxTensorRank> lo{}, hi{};
  for (std::uint32_t d = 1; d < kMaxTensorRank; ++d) {
    if (d >= map.rank()) {
      lo[d] = 0;
      hi[d] = 1;
      continue;
    }
    lo[d] = std::max<std::int64_t>(c[d], 0);
    hi[d] = std::min<std::int64_t>(static_cast<std::int64_t>(c[d]) + map.box(d), static_cast<std::int64_t>(map.dim(d)));
    if (hi[d] <= lo[d]) return {};
    if (d == 1) {
      lo[d] /= kBlockRows;
      hi[d] = (hi[d] + kBlockRows - 1) / kBlockRows;
    }
  }
  // The blocks in touch order (per row group: its promotion blocks, then the box's own), then one
  // call to the L2 policy for the whole box. Without promotion (the common case) no flags are kept.
  keys_.clear();
  promoted_.clear();
  const bool promoting = granule > line;
  for (std::int64_t i4 = lo[4]; i4 < hi[4]; ++i4)
    for (std::int64_t i3 = lo[3]; i3 < hi[3]; ++i3)
      for (std::int64_t i2 = lo[2]; i2 < hi[2]; ++i2)
        for (std::int64_t g1 = lo[1]; g1 < hi[1]; ++g1) {
          std::uint64_t row = map.address().value;
          if (map.rank() > 1) row += static_cast<std::uint64_t>(g1) * kBlockRows * map.stride(1);
          if (map.rank() > 2) row += static_cast<std::uint64_t>(i2) * map.stride(2);
          if (map.rank() > 3) row += static_cast<std::uint64_t>(i3) * map.stride(3);
          if (map.rank() > 4) row += static_cast<std::uint64_t>(i4) * map.stride(4);
          if (promoting) {  // the promotion granules' lines outside the box
            const std::uint64_t lo = row + first_line * line, hi = row + (last_line + 1) * line;
            for (std::uint64_t a = lo / granule * granule; a < (hi + granule - 1) / granule * granule; a += line) {
              if (a >= lo && a < hi) continue;
              keys_.push_back(a);
              promoted_.push_back(1);
            }
          }
          for (std::uint64_t l = first_line; l <= last_line; ++l) {
            keys_.push_back(row + l * line);
            if (promoting) promoted_.push_back(0);
          }
        }
  touches_.resize(keys_.size());
  l2_->access(keys_, touches_);
  Touched t;
  for (std::size_t i = 0; i < touches_.size(); ++i) {
    const L2Touch& b = touches_[i];
    if (promoting && promoted_[i]) {
      if (b.hit) continue;
      ++t.promoted_misses;
      if (fresh) fresh->push_back(b.in_flight);
      continue;
    }
    ++t.blocks;
    t.hits += b.hit ? 1 : 0;
    if (!fresh) continue;
    if (b.hit && b.in_flight_until > at && config_.l2.coalesce_in_flight) {
      ++t.coalesced;
      t.coalesced_ready = std::max(t.coalesced_ready, b.in_flight_until);
    } else {
      fresh->push_back(b.in_flight);
    }
  }
  return t;
}

MemorySystem::Lookup MemorySystem::lookup(const TensorMap& map, const TensorCoords& coords, bool promote, Cycle at,
                                          std::vector<Cycle*>* fresh) {
  const std::uint64_t bytes = in_bounds_elements(map, coords) * size_of(map.dtype());
  const Touched t = touch(map, coords, promote, at, fresh);
  if (!t.blocks) return Lookup{bytes, 0};
  const std::uint64_t per_block = bytes / t.blocks;  // a promoted block holds as many rows as the box's
  return Lookup{bytes, bytes - bytes * t.hits / t.blocks, bytes * t.coalesced / t.blocks, t.coalesced_ready,
                per_block * t.promoted_misses};
}

HbmAccess MemorySystem::hbm_transfer(Cycle at, std::uint64_t bytes) {
  const HbmAccess a = hbm_->transfer(at, bytes);
  hbm_counter_.add(*this, a.through, bytes);
  return a;
}

MemoryRead MemorySystem::read(const TensorMap& map, const TensorCoords& coords, Cycle at) {
  fresh_.clear();
  const Lookup l = lookup(map, coords, true, at, &fresh_);
  stats_.l2_read_bytes += l.bytes;
  stats_.l2_hit_bytes += l.bytes - l.miss_bytes;
  stats_.l2_coalesced_bytes += l.coalesced_bytes;
  const std::uint64_t link_bytes = l.bytes - l.coalesced_bytes;
  Cycle ready = std::max(at, l.coalesced_ready);
  if (l.bytes) ready = std::max(ready, delivery_link_.transfer(at, l.bytes));
  if (link_bytes) {
    const Cycle through = l2_link_.transfer(at, link_bytes);
    l2_counter_.add(*this, through, link_bytes);
    ready = std::max(ready, through);
  }
  if (const std::uint64_t hbm_bytes = l.miss_bytes + l.promoted_miss_bytes) {
    stats_.hbm_read_bytes += hbm_bytes;
    ready = std::max(ready, hbm_transfer(at, hbm_bytes).ready);
  }
  for (Cycle* in_flight : fresh_) *in_flight = ready;
  return MemoryRead{ready, l.miss_bytes};
}

void MemorySystem::prefetch(const TensorMap& map, const TensorCoords& coords, Cycle at) {
  const Lookup l = lookup(map, coords, true);
  const std::uint64_t hbm_bytes = l.miss_bytes + l.promoted_miss_bytes;
  stats_.hbm_read_bytes += hbm_bytes;
  if (hbm_bytes) hbm_transfer(at, hbm_bytes);
}

Cycle MemorySystem::write(const TensorMap& map, const TensorCoords& coords, Cycle at) {
  const std::uint64_t bytes = lookup(map, coords, false).bytes;  // write-allocate: the lines are resident afterwards
  stats_.l2_write_bytes += bytes;
  stats_.hbm_write_bytes += bytes;
  hbm_transfer(at, bytes);  // written through: it takes HBM bandwidth, the store does not wait for it
  const Cycle taken = l2_link_.transfer(at, bytes);
  l2_counter_.add(*this, taken, bytes);
  return taken;
}

MemoryStats MemorySystem::stats() const {
  MemoryStats s = stats_;
  s.l2_busy_cycles = l2_link_.busy_cycles();
  s.hbm_busy_cycles = hbm_->busy_cycles();
  return s;
}

}  // namespace bwsim
