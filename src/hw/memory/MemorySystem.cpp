#include "bwsim/hw/memory/MemorySystem.hpp"

#include <algorithm>
#include <bit>

#include "bwsim/hw/memory/TensorCopy.hpp"
#include "bwsim/hw/sm/ChipLayout.hpp"

namespace bwsim {

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
        .counter("l2_reduce_bytes", StatUnit::Bytes, "bytes TMA reductions (.add) added into the L2",
                 &MemoryStats::l2_reduce_bytes)
        .formula("l2_gbytes_per_second", StatUnit::GBytesPerSecond,
                 "l2_read_bytes + l2_write_bytes + l2_reduce_bytes per second at the config's clock",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue {
                   return c.per_second(static_cast<double>(m.l2_read_bytes + m.l2_write_bytes + m.l2_reduce_bytes), 1e9);
                 })
        .counter("l2_busy_cycles", StatUnit::Cycles,
                 "cycles the L2-to-SM link spent moving bytes (of two die halves, the busier one)",
                 &MemoryStats::l2_busy_cycles)
        .formula("l2_busy_fraction", StatUnit::Fraction, "l2_busy_cycles over the run's cycles",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue { return c.busy_fraction(m.l2_busy_cycles); },
                 {"L2 link", "L2-bandwidth"})
        .counter("hbm_read_bytes", StatUnit::Bytes, "bytes read from HBM: L2 misses of loads and prefetches",
                 &MemoryStats::hbm_read_bytes)
        .counter("hbm_write_bytes", StatUnit::Bytes, "bytes written back to HBM: a line for each one stores and reductions allocated",
                 &MemoryStats::hbm_write_bytes)
        .formula("hbm_gbytes_per_second", StatUnit::GBytesPerSecond,
                 "hbm_read_bytes + hbm_write_bytes per second at the config's clock",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue {
                   return c.per_second(static_cast<double>(m.hbm_read_bytes + m.hbm_write_bytes), 1e9);
                 })
        .counter("hbm_busy_cycles", StatUnit::Cycles,
                 "cycles the HBM link spent moving bytes (of two dies' stacks, the busier one)",
                 &MemoryStats::hbm_busy_cycles)
        .formula("hbm_busy_fraction", StatUnit::Fraction, "hbm_busy_cycles over the run's cycles",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue { return c.busy_fraction(m.hbm_busy_cycles); },
                 {"HBM", "HBM-bandwidth"})
        .counter("d2d_bytes", StatUnit::Bytes,
                 "bytes that crossed the die-to-die link: reads and writes by an SM of the other die than the "
                 "address's home L2 half, and the traffic such a read with an L2 promotion wider than a line "
                 "sends back (`dies.promotion_request_share` of its bytes)",
                 &MemoryStats::d2d_bytes)
        .counter("d2d_busy_cycles", StatUnit::Cycles, "cycles the busier direction of the die-to-die link spent moving bytes",
                 &MemoryStats::d2d_busy_cycles)
        .formula("d2d_busy_fraction", StatUnit::Fraction, "d2d_busy_cycles over the run's cycles",
                 [](const MemoryStats& m, const StatContext& c) -> StatValue { return c.busy_fraction(m.d2d_busy_cycles); },
                 {"die-to-die link", "die-to-die-bandwidth"});
    return g;
  }();
  return group;
}

MemorySystem::MemorySystem(const HardwareConfig& config) : MemorySystem(config, chip_layout(config)) {}

MemorySystem::MemorySystem(const HardwareConfig& config, const ChipLayout& layout)
    : config_(config), sm_die_(layout.die), sm_gpc_(layout.gpc),
      line_shift_(std::has_single_bit(config.l2.line_bytes) ? static_cast<unsigned>(std::countr_zero(config.l2.line_bytes)) : 0),
      load_gate_(layout, config.l2.cpc_load_bytes_in_flight) {
  // Twice as many slots as the L2 has lines (H100: 2^20, 24 MiB), so that the lines in flight at
  // once (132 SMs x 192 KiB is 0.2 M) rarely meet in a slot. With a quarter as many (2^18) the
  // ping-pong 128x128 4096^3 GEMM took 2.8% fewer cycles and the chaotic ping-pong 8192^3 draw 7%
  // fewer (lost joins); with twice as many the 4096^3 rows stay within 0.5%.
  if (config.l2.join_within_gpc) gpc_joins_ = std::make_unique<GpcJoinTable>(2 * config.l2.bytes / config.l2.line_bytes);
  const std::uint32_t dies = config.dies.count;
  const double share = 1.0 / dies, clock = config.clock_ghz;
  const std::uint64_t blocks = std::max<std::uint64_t>(1, config.l2.bytes / (config.l2.line_bytes * config.l2.block_rows));
  for (std::uint32_t d = 0; d < dies; ++d) {
    halves_.push_back(Half{l2_policies().at(config.l2.policy, config.source).make(std::max<std::uint64_t>(1, blocks / dies),
                                                                                      L2SetGeometry{config.l2.ways, config.l2.line_bytes,
                                                                                                    config.l2.block_rows, config.l2.page_bytes}),
                           hbm_models().at(config.hbm.model, config.source).make(config, share),
                           BandwidthLink(config.l2.gbytes_per_second * share / clock),
                           BandwidthLink(config.l2.delivery_gbytes_per_second * share / clock)});
    if (dies > 1) links_.emplace_back(config.dies.link_gbytes_per_second / clock);
  }
}

std::uint32_t MemorySystem::home(std::uint64_t key) const {
  if (halves_.size() == 1) return 0;
  return static_cast<std::uint32_t>(std::popcount(key / config_.dies.interleave_bytes) & 1);
}

void MemorySystem::begin_launch(Tracer* tracer, int pid) {
  for (Half& h : halves_) {
    h.l2->clear_in_flight();
    h.l2_link.reset();
    h.delivery_link.reset();
    h.hbm->reset();
  }
  for (BandwidthLink& l : links_) l.reset();
  if (gpc_joins_) gpc_joins_->clear();
  load_gate_.reset();
  stats_ = {};
  tracer_ = tracer;
  pid_ = pid;
  l2_counter_ = WindowCounter{l2_counter_.name};
  hbm_counter_ = WindowCounter{hbm_counter_.name};
  d2d_counter_ = WindowCounter{d2d_counter_.name};
  if (tracer_) tracer_->process_name(pid_, "L2 and HBM (chip)");
}

void MemorySystem::end_launch() {
  if (tracer_) {
    l2_counter_.flush(*this);
    hbm_counter_.flush(*this);
    if (!links_.empty()) d2d_counter_.flush(*this);
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

// Ours: h100_join_window.csv / h200_join_window.csv and *_join_window_arrivals.csv (pairs of SMs
// reading the same boxes DELAY cycles apart): a partner's read joins its leader's until about
// l2.join_window_cycles after the leader's request, and under load for a share of the time the
// leader waited at the L2 beyond that (sim_configs/h100.yaml).
bool MemorySystem::joinable(const L2InFlight& last, Cycle at) const {
  if (!config_.l2.join_window_cycles) return true;
  const Cycle requested = last.until - last.waited;
  return static_cast<double>(at) < static_cast<double>(requested + config_.l2.join_window_cycles) +
                                       config_.l2.join_queue_share * static_cast<double>(last.waited);
}

// The blocks of a box: for every group of l2.block_rows rows of dimension 1 (and every index of
// the higher dimensions) the 128-byte lines its innermost extent covers, keyed by their GMEM address.
// Blocks wholly outside the tensor are not fetched (TMA fills them without reading memory).
// With `promote`, the lines of the map's L2 promotion granules that the box's lines lie in are
// touched too; those that miss are fetched beside the box and are in flight with it (a granule
// wider than a line: 256B promotion with 128-byte lines).
MemorySystem::Touched MemorySystem::touch(std::uint32_t die, const TensorMap& map, const TensorCoords& c, bool write,
                                          Cycle at, std::vector<L2InFlight*>* fresh, std::uint32_t sm) {
  const bool promote = !write;
  const std::uint64_t line = config_.l2.line_bytes;
  const std::int64_t rows = config_.l2.block_rows;
  const std::int64_t lo0 = std::max<std::int64_t>(c[0], 0);
  const std::int64_t hi0 = std::min<std::int64_t>(
      static_cast<std::int64_t>(c[0]) + static_cast<std::int64_t>(map.box(0)), static_cast<std::int64_t>(map.dim(0)));
  if (hi0 <= lo0) return {};
  const std::uint64_t first_line = map.gmem_bytes(static_cast<std::uint64_t>(lo0)) / line;
  const std::uint64_t last_line = (map.gmem_bytes(static_cast<std::uint64_t>(hi0)) - 1) / line;
  // Promotion widens each row's fetch when rows lie a granule or more apart; a granule spanning
  // several rows of a denser tensor is mostly the box's own rows (not modeled beyond them).
  const std::uint64_t promoted = promote ? promotion_bytes(map.l2_promotion()) : 0;
  const std::uint64_t granule = map.rank() > 1 && map.stride(1) >= promoted ? std::max(line, promoted) : line;
  // Row-group ranges per dimension >= 1 (dimension 1 in groups of l2.block_rows rows).
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
      lo[d] /= rows;
      hi[d] = (hi[d] + rows - 1) / rows;
    }
  }
  // The blocks in touch order (per row group: its promotion blocks, then the box's own), then one
  // call to the L2 policy for the whole box. Without promotion (the common case) no flags are kept.
  // The keys are written into buffers kept at the largest box's size (no per-block push_back).
  const bool promoting = granule > line;
  const std::uint64_t box_lines = last_line - first_line + 1;
  const std::uint64_t per_group = box_lines + (promoting ? 2 * (granule / line) : 0);
  const std::uint64_t groups = static_cast<std::uint64_t>((hi[1] - lo[1]) * (hi[2] - lo[2]) * (hi[3] - lo[3]) * (hi[4] - lo[4]));
  if (keys_.size() < groups * per_group) {
    keys_.resize(groups * per_group);
    promoted_.resize(groups * per_group);
    touches_.resize(groups * per_group);
  }
  std::uint64_t* key = keys_.data();
  std::uint8_t* flag = promoted_.data();
  const std::uint64_t group_step = map.rank() > 1 ? static_cast<std::uint64_t>(rows) * map.stride(1) : 0;
  for (std::int64_t i4 = lo[4]; i4 < hi[4]; ++i4)
    for (std::int64_t i3 = lo[3]; i3 < hi[3]; ++i3)
      for (std::int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
        std::uint64_t row = map.address().value + first_line * line + static_cast<std::uint64_t>(lo[1]) * group_step;
        if (map.rank() > 2) row += static_cast<std::uint64_t>(i2) * map.stride(2);
        if (map.rank() > 3) row += static_cast<std::uint64_t>(i3) * map.stride(3);
        if (map.rank() > 4) row += static_cast<std::uint64_t>(i4) * map.stride(4);
        for (std::int64_t g1 = lo[1]; g1 < hi[1]; ++g1, row += group_step) {
          const std::uint64_t end = row + box_lines * line;
          if (promoting)  // the promotion granules' lines outside the box
            for (std::uint64_t a = row / granule * granule; a < (end + granule - 1) / granule * granule; a += line) {
              if (a >= row && a < end) continue;
              *key++ = a;
              *flag++ = 1;
            }
          for (std::uint64_t a = row; a < end; a += line) {
            *key++ = a;
            if (promoting) *flag++ = 0;
          }
        }
      }
  const std::size_t count = static_cast<std::size_t>(key - keys_.data());
  const std::span<const std::uint64_t> keys(keys_.data(), count);
  const std::span<L2Touch> touches(touches_.data(), count);
  // Host-cache prefetch only (results do not depend on it): the GPC join records the reads look
  // up after the L2's (l2.join_scope gpc), one random slot per line, so that their misses overlap
  // the lookup instead of queueing after it.
  if (gpc_joins_ && fresh)
    for (std::size_t i = 0; i < count; ++i) gpc_joins_->prefetch(line_number(keys[i]), sm_gpc_[sm]);
  const bool split = halves_.size() > 1;
  if (split && promoting) {
    // A promotion granule's lines beside the box that are homed in the other half are fetched
    // there: the reader's half keeps a copy of the lines it was sent (the box's), not of the rest
    // (ours, H200: h200_l2_promotion_rows.csv, reading the promoted halves crosses for half of
    // them, 125,683 fabric sectors in ncu against 7,408 for the requested halves).
    near_keys_.clear();
    near_index_.clear();
    for (std::uint32_t i = 0; i < count; ++i) {
      if (promoted_[i] && home(keys[i]) != die) {
        touches[i] = L2Touch{};
        continue;
      }
      near_keys_.push_back(keys[i]);
      near_index_.push_back(i);
    }
    near_touches_.resize(near_keys_.size());
    halves_[die].l2->access(near_keys_, near_touches_);
    for (std::size_t j = 0; j < near_index_.size(); ++j) touches[near_index_[j]] = near_touches_[j];
  } else {
    halves_[die].l2->access(keys, touches);
  }
  if (split) {  // near misses (every write) of blocks homed on the other die: its half, in one call
    served_by_.assign(count, static_cast<std::uint8_t>(die));
    far_keys_.clear();
    far_index_.clear();
    for (std::uint32_t i = 0; i < count; ++i) {
      if ((touches[i].hit && !write) || home(keys[i]) == die) continue;
      served_by_[i] = static_cast<std::uint8_t>(1 - die);
      far_keys_.push_back(keys[i]);
      far_index_.push_back(i);
    }
    far_touches_.resize(far_keys_.size());
    if (!far_keys_.empty()) halves_[1 - die].l2->access(far_keys_, far_touches_);
    for (std::size_t j = 0; j < far_touches_.size(); ++j) {  // the home half's state; the near copy fills too
      L2Touch& t = touches[far_index_[j]];
      t.hit = far_touches_[j].hit;
      t.last = far_touches_[j].last;
      if (!t.in_flight) {  // a promoted line only the home holds: the promotion's own branch below records it
        t.in_flight = far_touches_[j].in_flight;
        continue;
      }
      if (fresh && !t.hit) {
        far_touches_[j].in_flight->fill = 1;
        fresh->push_back(far_touches_[j].in_flight);
      }
    }
  }
  Touched t;
  for (std::size_t i = 0; i < count; ++i) {
    const L2Touch& b = touches[i];
    Counts& c = t.served[split ? served_by_[i] : die];
    if (promoting && promoted_[i]) {
      if (b.hit) continue;
      ++c.promoted_misses;
      if (fresh) {
        b.in_flight->fill = 1;
        fresh->push_back(b.in_flight);
      }
      continue;
    }
    ++c.blocks;
    c.hits += b.hit ? 1 : 0;
    if (!fresh) continue;
    // A read joins a transfer in flight to another SM while it is joinable (l2.join_window_cycles);
    // the SM's own earlier request of the line does not serve a second one (ours:
    // h100_loads_private.csv, 4 hot boxes per SM with 6 in flight: the arrays' rate, not 1.4x it).
    // Within a GPC (l2.join_scope gpc) the transfer to join is the line's last to this SM's GPC.
    // With a window or within a GPC, a read that does not join a fill in flight waits for it, then
    // is read out of the arrays (without either, a read that does not join is a plain hit).
    const bool in_flight = b.hit && b.last.until > at && config_.l2.coalesce_in_flight;
    L2InFlight* group = gpc_joins_ ? &gpc_joins_->of(line_number(keys[i]), sm_gpc_[sm]) : nullptr;
    const L2InFlight& joined = group ? *group : b.last;
    if (config_.l2.coalesce_in_flight && b.hit && joined.until > at && joined.sm != sm && joinable(joined, at)) {
      ++c.coalesced;
      t.coalesced_ready = std::max(t.coalesced_ready, joined.until);
    } else {
      const bool after_fill = in_flight && b.last.fill && (config_.l2.join_window_cycles || gpc_joins_);
      if (after_fill) t.coalesced_ready = std::max(t.coalesced_ready, b.last.until);
      b.in_flight->fill = !b.hit || after_fill;
      fresh->push_back(b.in_flight);
      if (group) {
        group->fill = b.in_flight->fill;
        fresh->push_back(group);
      }
    }
  }
  return t;
}

// The box's bytes split over the halves that served them in proportion to their blocks (exactly
// summing to the box).
MemorySystem::Lookup MemorySystem::lookup(std::uint32_t die, const TensorMap& map, const TensorCoords& coords,
                                          bool write, Cycle at, std::vector<L2InFlight*>* fresh,
                                          std::uint32_t sm) {
  Lookup l;
  l.bytes = map.gmem_bytes(in_bounds_elements(map, coords));
  const Touched t = touch(die, map, coords, write, at, fresh, sm);
  l.coalesced_ready = t.coalesced_ready;
  const std::uint32_t blocks = t.blocks();
  if (!blocks) {
    l.part[die].bytes = l.bytes;
    return l;
  }
  const std::uint64_t per_block = l.bytes / blocks;  // a promoted block holds as many rows as the box's
  std::uint64_t blocks_before = 0;
  for (std::uint32_t h = 0; h < halves_.size(); ++h) {
    const Counts& c = t.served[h];
    Part& p = l.part[h];
    p.promoted_miss_bytes = per_block * c.promoted_misses;
    if (!c.blocks) continue;
    p.bytes = l.bytes * (blocks_before + c.blocks) / blocks - l.bytes * blocks_before / blocks;
    blocks_before += c.blocks;
    p.miss_bytes = p.bytes - p.bytes * c.hits / c.blocks;
    p.coalesced_bytes = p.bytes * c.coalesced / c.blocks;
  }
  return l;
}

HbmAccess MemorySystem::hbm_transfer(std::uint32_t home, Cycle at, std::uint64_t bytes) {
  const HbmAccess a = halves_[home].hbm->transfer(at, bytes);
  hbm_counter_.add(*this, a.through, bytes);
  return a;
}

Cycle MemorySystem::cross(std::uint32_t from, Cycle at, std::uint64_t bytes) {
  stats_.d2d_bytes += bytes;
  const Cycle through = links_[from].transfer(at, bytes);
  d2d_counter_.add(*this, through, bytes);
  return through;
}

MemoryRead MemorySystem::read(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at) {
  fresh_.clear();
  const std::uint32_t die = sm_die_[sm];
  const Lookup l = lookup(die, map, coords, false, at, &fresh_, sm);
  stats_.l2_read_bytes += l.bytes;
  Cycle ready = std::max(at, l.coalesced_ready);
  std::uint64_t miss_bytes = 0;
  bool far_hits = false;
  const bool promotes = promotion_bytes(map.l2_promotion()) > config_.l2.line_bytes;
  for (std::uint32_t h = 0; h < halves_.size(); ++h) {
    const Part& p = l.part[h];
    Half& half = halves_[h];
    far_hits = far_hits || (h != die && p.bytes > p.miss_bytes);
    stats_.l2_hit_bytes += p.bytes - p.miss_bytes;
    stats_.l2_coalesced_bytes += p.coalesced_bytes;
    miss_bytes += p.miss_bytes;
    Cycle served = at;
    if (p.bytes) served = std::max(served, half.delivery_link.transfer(at, p.bytes));
    // The arrays read the hits out and write the fills in (the SM gets a miss's data with its fill).
    if (const std::uint64_t link_bytes = p.bytes - p.coalesced_bytes - p.miss_bytes +
                                         fill_array_bytes(p.miss_bytes + p.promoted_miss_bytes)) {
      const Cycle through = half.l2_link.transfer(at, link_bytes);
      l2_counter_.add(*this, through, link_bytes);
      served = std::max(served, through);
    }
    if (const std::uint64_t hbm_bytes = p.miss_bytes + p.promoted_miss_bytes) {
      stats_.hbm_read_bytes += hbm_bytes;
      served = std::max(served, hbm_transfer(h, at, hbm_bytes).ready);
    }
    if (h != die && p.bytes) {
      // With a promotion wider than a line the read also sends dies.promotion_request_share of its
      // bytes towards the serving half (h200.yaml: the swap rows' 256B promotion). They take that
      // way's link time from the data flowing on it; the read does not wait for them (silicon's
      // one-way crossing runs at its rate with or without the promotion).
      if (promotes && config_.dies.promotion_request_share > 0)
        cross(die, at, static_cast<std::uint64_t>(static_cast<double>(p.bytes) * config_.dies.promotion_request_share));
      served = std::max(served, cross(h, at, p.bytes)) + config_.dies.link_latency;
    }
    ready = std::max(ready, served);
  }
  const auto waited = static_cast<std::uint32_t>(std::min<Cycle>(ready - at, 0xffffffffu));
  for (L2InFlight* in_flight : fresh_) {
    in_flight->until = ready;
    in_flight->sm = sm;
    in_flight->waited = waited;
  }
  return MemoryRead{ready, miss_bytes, far_hits};
}

void MemorySystem::prefetch(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at) {
  const Lookup l = lookup(sm_die_[sm], map, coords, false);
  for (std::uint32_t h = 0; h < halves_.size(); ++h) {
    const std::uint64_t hbm_bytes = l.part[h].miss_bytes + l.part[h].promoted_miss_bytes;
    stats_.hbm_read_bytes += hbm_bytes;
    if (!hbm_bytes) continue;
    hbm_transfer(h, at, hbm_bytes);
    const std::uint64_t array_bytes = fill_array_bytes(hbm_bytes);
    l2_counter_.add(*this, halves_[h].l2_link.transfer(at, array_bytes), array_bytes);
  }
}

// Write-back with write-allocate: each byte takes l2.store_link_cost array bytes; a line that was
// not resident takes the place of another, whose write-back (as many bytes) the store waits for
// at HBM's rate (a stream of stores to new lines runs at HBM's bandwidth, one to resident lines at
// the L2's). A store that writes nothing (wholly outside the tensor) is taken at once.
Cycle MemorySystem::write(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at) {
  const std::uint32_t die = sm_die_[sm];
  const Lookup l = lookup(die, map, coords, true);  // write-allocate: the lines are resident afterwards
  stats_.l2_write_bytes += l.bytes;
  Cycle taken = at;
  for (std::uint32_t h = 0; h < halves_.size(); ++h) {
    const std::uint64_t bytes = l.part[h].bytes;
    if (!bytes) continue;
    if (const std::uint64_t evicted = l.part[h].miss_bytes) {
      stats_.hbm_write_bytes += evicted;
      taken = std::max(taken, hbm_transfer(h, at, evicted).through);
    }
    const auto array_bytes = static_cast<std::uint64_t>(static_cast<double>(bytes) * config_.l2.store_link_cost);
    Cycle t = halves_[h].l2_link.transfer(at, array_bytes);
    l2_counter_.add(*this, t, array_bytes);
    if (h != die) t = std::max(t, cross(die, at, bytes)) + config_.dies.link_latency;
    taken = std::max(taken, t);
  }
  return taken;
}

Cycle MemorySystem::reduce(std::uint32_t sm, const TensorMap& map, const TensorCoords& coords, Cycle at) {
  const std::uint32_t die = sm_die_[sm];
  const Lookup l = lookup(die, map, coords, true);
  stats_.l2_reduce_bytes += l.bytes;
  Cycle done = at;
  for (std::uint32_t h = 0; h < halves_.size(); ++h) {
    const Part& p = l.part[h];
    if (!p.bytes) continue;
    Cycle start = at;
    if (p.miss_bytes) {
      // Read for ownership; the line's write-back after the add takes its HBM bandwidth too,
      // reserved now (the link serves requests in arrival order: a reservation dated at the
      // add would hold up every request that arrives before it).
      stats_.hbm_read_bytes += p.miss_bytes;
      stats_.hbm_write_bytes += p.miss_bytes;
      start = hbm_transfer(h, at, p.miss_bytes).ready;
      hbm_transfer(h, at, p.miss_bytes);
    }
    const auto array_bytes = static_cast<std::uint64_t>(static_cast<double>(p.bytes) * config_.l2.reduce_link_cost);
    Cycle t = halves_[h].l2_link.transfer(start, array_bytes);
    l2_counter_.add(*this, t, array_bytes);
    if (h != die) t = std::max(t, cross(die, at, p.bytes)) + config_.dies.link_latency;
    done = std::max(done, t);
  }
  return done;
}

MemoryStats MemorySystem::stats() const {
  MemoryStats s = stats_;
  for (const Half& h : halves_) {
    s.l2_busy_cycles = std::max(s.l2_busy_cycles, h.l2_link.busy_cycles());
    s.hbm_busy_cycles = std::max(s.hbm_busy_cycles, h.hbm->busy_cycles());
  }
  for (const BandwidthLink& l : links_) s.d2d_busy_cycles = std::max(s.d2d_busy_cycles, l.busy_cycles());
  return s;
}

}  // namespace bwsim
