// The L2 footprint sweep of tools/calibration/h100_l2_footprint.cu and the partition modes of
// h100_l2_partitions.cu as bwsim programs: one CTA per SM reads 16 KiB boxes of a region of F MiB
// through 4 stages, each SM as its role says (every CTA the whole region from a staggered start,
// "shared"; each its own slice, "split"; pairs of SMs of one or of both L2 partitions, or of one
// partition only, a slice each); a warm-up launch makes one pass, the measured launch two. The
// value is the measured launch's HBM bytes read per pass as a share of the footprint (x 100): 0
// while the L2 holds what the SMs read, 100 or more once it does not. The lag modes: pairs of SMs
// read a cold stream, the follower a set number of boxes behind its leader (the GEMM's A tile read
// by two CTAs that drift apart): 100 while the follower hits, 200 once it misses; lagi: the pairs'
// streams interleaved box by box in one region instead of 6 MiB apart. The reref modes:
// after a flush, launches before the warm-up (a slice X read twice, then Y once), the warm-up over
// new lines Z, and one measured pass over X or Y: which the L2 keeps, a line read twice or a newer
// one read once.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "bwsim/core/Error.hpp"
#include "bwsim/hw/sm/ChipLayout.hpp"
#include "bwsim/kernels/Ubench.hpp"
#include "bwsim/kernels/UbenchPrograms.hpp"

namespace bwsim {
namespace {

constexpr std::uint32_t kBox = 16384, kBoxRows = 128, kStages = 4, kSmem = 133120;
constexpr std::uint32_t kLagBoxes = 384;   // boxes per pair in the lag modes (6 MiB), as on silicon
constexpr std::uint32_t kFlushBoxes = 160 * 64;  // the lag modes' flush: 160 MiB read once
constexpr std::uint32_t kRerefMib = 16;          // the reref modes' X and Y, each
constexpr std::uint32_t kKmajorPitch = 16384, kKmajorBoxes = kKmajorPitch / 128;  // the _k modes' rows
// A follower's poll of its leader's count: silicon reads a flag in GMEM (ld.acquire.gpu, an L2
// round trip) and sleeps 64 ns between reads (E).
constexpr Cycle kPollCycles = 400;

// What the CTA on one SM reads (h100_l2_partitions.cu's Role): `count` boxes from box `first` on,
// starting `start` boxes in and wrapping; count 0: idle. Lag modes: start 1 marks the leader.
struct Role {
  std::uint32_t first = 0, count = 0, start = 0, pair = 0;
};

// A launch before the warm-up: every SM's role and the passes it makes.
struct Phase {
  std::vector<Role> roles;
  std::uint32_t passes = 1;
};

struct Plan {
  std::vector<Phase> before;        // launches after the flush, before the warm-up (the reref modes)
  std::vector<Role> warm, measure;  // by SM
  std::uint32_t boxes = 0;          // the footprint (lag modes: the leaders' boxes)
  std::uint32_t region = 0;         // boxes allocated, as the hardware program allocates them
  std::uint32_t passes = 2;         // of the measured launch
  bool flush_first = false;         // the swap / stay / oneway* / promo / reref modes: a flush before the warm-up (lag: always)
  std::uint32_t stages = kStages;   // boxes in flight per SM in the measured launch
  std::uint32_t box_stride = 1;     // the lag modes: boxes between a pair's consecutive boxes
  // The promo modes: rows 256 bytes apart, 256B L2 promotion, the measured launch reading the
  // boxes' second columns (x = 128) when `promoted_column`.
  bool promo = false, promoted_column = false;
  // A mode ending _k (h100_l2_partitions.cu): the GEMM's boxes, 128 rows kKmajorPitch bytes apart
  // read 128 bytes at a time with the 256B L2 promotion (_k128: 128B); box b is the
  // (b % kKmajorBoxes)-th column of row block b / kKmajorBoxes, so a slice is the consecutive
  // k-blocks of 128-row tiles. _c256: the modes' own boxes with the 256B promotion.
  bool kmajor = false;
  L2Promotion promotion = L2Promotion::None;
};

// Pairs of SMs: within each die (SM i with SM i + half of its die's list, the dies' pairs
// interleaved), across (the i-th SM of each die, the leader alternating), or within die `only`.
std::vector<std::pair<std::uint32_t, std::uint32_t>> sm_pairs(const std::vector<std::uint32_t> (&die)[2], bool cross,
                                                              int only = -1) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  if (cross) {
    for (std::size_t i = 0; i < std::min(die[0].size(), die[1].size()); ++i)
      pairs.push_back(i % 2 ? std::pair{die[1][i], die[0][i]} : std::pair{die[0][i], die[1][i]});
    return pairs;
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> side[2];
  for (int d = 0; d < 2; ++d) {
    if (only >= 0 && d != only) continue;
    const std::size_t h = die[d].size() / 2;
    for (std::size_t i = 0; i < h; ++i) side[d].push_back({die[d][i], die[d][i + h]});
  }
  for (std::size_t i = 0; i < std::max(side[0].size(), side[1].size()); ++i)
    for (int d = 0; d < 2; ++d)
      if (i < side[d].size()) pairs.push_back(side[d][i]);
  return pairs;
}

// h100_l2_partitions.cu's make_plan with the model's dies for the silicon's partitions (silicon's
// are sets of 4 GPCs, found by latency; roles go by membership, so where the SMs sit is moot).
Plan make_plan(const HardwareConfig& c, std::string mode, std::uint32_t param) {
  // A mode ending _s8: the measured launch keeps 8 boxes in flight per SM (h100_l2_partitions.cu).
  const bool deep = mode.size() > 3 && mode.compare(mode.size() - 3, 3, "_s8") == 0;
  if (deep) mode.resize(mode.size() - 3);
  const bool c256 = mode.ends_with("_c256"), k128 = mode.ends_with("_k128");
  if (c256) mode.resize(mode.size() - 5);
  if (k128) mode.resize(mode.size() - 3);
  const bool kmajor = mode.ends_with("_k");
  if (kmajor) mode.resize(mode.size() - 2);
  const std::uint32_t sms = c.sm.count, n = param * 64;
  std::vector<std::uint32_t> die[2];
  const ChipLayout layout = chip_layout(c);
  for (std::uint32_t s = 0; s < sms; ++s) die[std::min<std::uint32_t>(layout.die[s], 1)].push_back(s);
  const bool by_partition = mode != "shared" && mode != "split" && mode != "footprint_shared";
  if (by_partition && (die[0].size() < 2 || die[1].size() < 2))
    throw InputError(fmt::format("l2_partitions_{}: needs a config with two L2 halves of two or more SMs each (dies.count 2)",
                                 mode));
  Plan plan;
  plan.warm.assign(sms, Role{});
  plan.region = n;
  auto pairs_plan = [&](const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs) {
    const auto m = static_cast<std::uint32_t>(pairs.size()), slice = n / m;
    for (std::uint32_t i = 0; i < m; ++i) {  // the second reader half a slice behind the first
      plan.warm[pairs[i].first] = Role{i * slice, slice, 0, i};
      plan.warm[pairs[i].second] = Role{i * slice, slice, slice / 2, i};
    }
    plan.boxes = m * slice;
  };
  // Every reader the whole region, reader i starting at box i n / k (h100_l2_partitions.cu) or,
  // as h100_l2_footprint.cu staggers them, at i floor(n / k).
  auto all_read_all = [&](const std::vector<std::uint32_t>& readers, bool floor_stagger = false) {
    const auto k = static_cast<std::uint32_t>(readers.size());
    for (std::uint32_t i = 0; i < k; ++i) plan.warm[readers[i]] = Role{0, n, floor_stagger ? i * (n / k) : i * n / k, 0};
    plan.boxes = n;
  };
  // oneway_back*: oneway* with the dies' roles exchanged (die 1's SMs warm, die 0's cross).
  const std::string_view back = "oneway_back";
  if (mode.starts_with(back)) {
    std::swap(die[0], die[1]);
    mode = "oneway" + mode.substr(back.size());
  }
  std::vector<std::uint32_t> all(sms);
  std::iota(all.begin(), all.end(), 0u);
  if (mode == "shared" || mode == "footprint_shared") {
    all_read_all(all, mode == "footprint_shared");
  } else if (mode == "shared_half0") {
    all_read_all(die[0]);
  } else if (mode == "split") {
    const std::uint32_t count = n / sms;
    for (std::uint32_t s = 0; s < sms; ++s) plan.warm[s] = Role{s * count, count, 0, s};
    plan.boxes = sms * count;
  } else if (mode == "pair_same" || mode == "pair_cross") {
    pairs_plan(sm_pairs(die, mode == "pair_cross"));
  } else if (mode == "half0" || mode == "half1") {
    pairs_plan(sm_pairs(die, false, mode == "half0" ? 0 : 1));
  } else if (mode == "check_same" || mode == "check_cross") {
    // Die 0's SMs read their slices; then each slice is read once by another SM of die 0 or by die 1's i-th SM.
    const auto k = static_cast<std::uint32_t>(std::min(die[0].size(), die[1].size())), slice = n / k;
    plan.measure.assign(sms, Role{});
    for (std::uint32_t i = 0; i < k; ++i) {
      plan.warm[die[0][i]] = Role{i * slice, slice, 0, i};
      plan.measure[mode == "check_same" ? die[0][(i + k / 2) % k] : die[1][i]] = Role{i * slice, slice, 0, i};
    }
    plan.boxes = k * slice;
    plan.passes = 1;
    return plan;
  } else if (mode == "promo_even" || mode == "promo_odd") {
    // Die 0's SMs read their slices' first columns cold (the promotion brings the second), then
    // other SMs of die 0 read the first columns again (even) or the second (odd).
    const auto k = static_cast<std::uint32_t>(die[0].size()), slice = n / 2 / k;
    plan.measure.assign(sms, Role{});
    for (std::uint32_t i = 0; i < k; ++i) {
      plan.warm[die[0][i]] = Role{i * slice, slice, 0, i};
      plan.measure[die[0][(i + k / 2) % k]] = Role{i * slice, slice, 0, i};
    }
    plan.boxes = k * slice;
    plan.passes = 1;
    plan.flush_first = plan.promo = true;
    plan.promoted_column = mode == "promo_odd";
    return plan;
  } else if (mode == "swap" || mode == "stay" || mode == "oneway" || mode == "oneway_stay" || mode == "oneway_cold" ||
             mode == "oneway_cold_stay") {
    // Each die's SMs warm a half, a slice each, after a flush; then each slice is read once by the
    // other die's SM of the same index (swap) or by another SM of its own die (stay). oneway /
    // oneway_stay: die 0's half only, read by die 1's SMs or by die 0's own; oneway_cold*: the same
    // without the warm-up.
    const bool cross = mode == "swap" || mode == "oneway" || mode == "oneway_cold",
               both = mode == "swap" || mode == "stay", cold = mode == "oneway_cold" || mode == "oneway_cold_stay";
    const auto k = static_cast<std::uint32_t>(std::min(die[0].size(), die[1].size())), half = n / 2, slice = half / k;
    plan.measure.assign(sms, Role{});
    for (std::uint32_t d = 0; d < (both ? 2u : 1u); ++d)
      for (std::uint32_t i = 0; i < k; ++i) {
        const Role role{d * half + i * slice, slice, 0, i};
        if (!cold) plan.warm[die[d][i]] = role;
        plan.measure[cross ? die[1 - d][i] : die[d][(i + k / 2) % k]] = role;
      }
    plan.boxes = (both ? 2 : 1) * k * slice;
    plan.passes = 1;
    plan.flush_first = true;
    plan.stages = deep ? 8 : kStages;
    plan.kmajor = kmajor;
    plan.promotion = (kmajor && !k128) || c256 ? L2Promotion::B256 : L2Promotion::None;
    return plan;
  } else if (mode.starts_with("reref")) {
    // Does a line read twice outlast one read once? After a flush every SM reads its slice of X
    // (kRerefMib) twice (rerefp: the second time another SM of its die reads it, rerefc: an SM of
    // the other die), then its slice
    // of Y (as large) once, then of Z (param MiB, new lines) once; the measured launch reads X
    // (reref_x) or Y (reref_y) once more. Recency alone (LRU) loses X first; a policy that keeps
    // re-read lines (clock's second chance) loses Y first. rerefj: X read once by pairs of SMs of
    // one die at the same time (each pair a slice, both from its start: the second reader joins
    // the first's transfers in flight, as a GEMM's A tile is read).
    // partner: SM s's slice read by another SM of its die ('p') or of the other ('c').
    auto slices = [&](std::uint32_t first, std::uint32_t boxes, char partner) {
      std::vector<Role> roles(sms);
      for (std::uint32_t s = 0; s < sms; ++s) {
        const std::uint32_t d = std::min<std::uint32_t>(layout.die[s], 1);
        const std::vector<std::uint32_t>& side = die[d];
        const std::vector<std::uint32_t>& other = die[1 - d];
        const auto i = static_cast<std::size_t>(std::find(side.begin(), side.end(), s) - side.begin());
        const std::uint32_t reader = partner == 'p'   ? side[(i + side.size() / 2) % side.size()]
                                     : partner == 'c' ? other[i % other.size()]
                                                      : s;
        roles[reader] = Role{first + s * (boxes / sms), boxes / sms, 0, s};
      }
      return roles;
    };
    const char partner = mode[5];  // reref_*, rerefp_*, rerefc_*, rerefj_*
    if (partner == 'c' && die[0].size() != die[1].size())
      throw InputError(fmt::format("l2_partitions_{}: needs two L2 halves of as many SMs (has {} and {})", mode,
                                   die[0].size(), die[1].size()));
    const std::uint32_t side = kRerefMib * 64;
    if (partner == 'j') {
      const auto pairs = sm_pairs(die, false);
      const auto m = static_cast<std::uint32_t>(pairs.size()), slice = side / m;
      std::vector<Role> joined(sms);
      for (std::uint32_t i = 0; i < m; ++i) joined[pairs[i].first] = joined[pairs[i].second] = Role{i * slice, slice, 0, i};
      plan.before = {Phase{joined, 1}, Phase{slices(side, side, '_'), 1}};
    } else if (partner != '_') {
      plan.before = {Phase{slices(0, side, '_'), 1}, Phase{slices(0, side, partner), 1}, Phase{slices(side, side, '_'), 1}};
    } else {
      plan.before = {Phase{slices(0, side, '_'), 2}, Phase{slices(side, side, '_'), 1}};
    }
    plan.warm = slices(2 * side, n, '_');
    plan.measure = slices(mode.back() == 'x' ? 0 : side, side, '_');
    plan.boxes = sms * (side / sms);
    plan.region = 2 * side + n;
    plan.passes = 1;
    plan.flush_first = true;
    return plan;
  } else if (mode.starts_with("lag_") || mode.starts_with("lagi_")) {
    const auto pairs = sm_pairs(die, mode.ends_with("_cross"));
    const auto count = static_cast<std::uint32_t>(pairs.size());
    plan.measure.assign(sms, Role{});
    // lagi: box j of pair i is box j x pairs + i (the pairs' streams interleaved in one region).
    if (mode.starts_with("lagi_")) plan.box_stride = count;
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t first = plan.box_stride == 1 ? i * kLagBoxes : i;
      plan.measure[pairs[i].first] = Role{first, kLagBoxes, 1, i};
      plan.measure[pairs[i].second] = Role{first, kLagBoxes, 0, i};
    }
    plan.boxes = plan.region = count * kLagBoxes;
    plan.passes = 1;
    return plan;
  }
  plan.measure = plan.warm;
  return plan;
}

// What the measured launch did: its HBM bytes read, and its slowest CTA's cycles from its first
// instruction to its last box's landing (silicon's clock64 span).
struct Measured {
  std::uint64_t hbm_read_bytes = 0;
  Cycle slowest_cta = 0;
};

// Runs a plan: a flush launch (160 MiB read once, split among the SMs) for the lag, swap, stay,
// oneway*, promo and reref modes, the launches before the warm-up (reref), the warm-up launch (not
// for the lag modes), then the measured one.
// `lag`: the lag modes' follower distance in boxes.
Measured run_plan(const HardwareConfig& c, const Plan& plan, std::int64_t lag = -1) {
  Simulator sim(c, SimOptions{.mode = Mode::Timing});
  const LaunchConfig launch{.grid_ctas = c.sm.count, .block_threads = 32, .dynamic_smem_bytes = kSmem};
  auto map_of = [&](std::uint32_t boxes, L2Promotion promotion = L2Promotion::None) {
    return ubench_box_map(sim.gmem().alloc(static_cast<std::uint64_t>(boxes) * kBox), boxes * kBoxRows, kBoxRows,
                          promotion);
  };
  const bool flush_first = lag >= 0 || plan.flush_first;
  const std::uint64_t region_bytes = static_cast<std::uint64_t>(plan.region) * kBox;
  const TensorMap map =
      plan.kmajor  ? ubench_strided_map(sim.gmem().alloc(region_bytes), kKmajorPitch, plan.region, kBoxRows, plan.promotion)
      : plan.promo ? ubench_strided_map(sim.gmem().alloc(region_bytes), 256,
                                        static_cast<std::uint64_t>(plan.region) * kBoxRows / 2, kBoxRows, L2Promotion::B256)
                   : map_of(plan.region, plan.promotion);
  // Box b of a slice: a run of rows, or in the _k modes a k-block of a 128-row tile.
  auto box_at = [&](std::uint32_t b, std::int32_t x) {
    return plan.kmajor ? TensorCoords{static_cast<std::int32_t>((b % kKmajorBoxes) * 128),
                                      static_cast<std::int32_t>((b / kKmajorBoxes) * kBoxRows)}
                       : TensorCoords{x, static_cast<std::int32_t>(kBoxRows * b)};
  };
  const TensorMap flush = map_of(flush_first ? kFlushBoxes : 1);
  Cycle slowest = 0;
  auto stream = [&](const TensorMap& m, const std::vector<Role>& roles, std::uint32_t passes,
                    std::uint32_t stages = kStages, std::int32_t x = 0) {
    return [&, passes, stages, x](Warp& w) -> Task {
      const Role r = roles[w.sm_idx()];
      if (!r.count) co_return;
      const Cycle start = w.now();
      const StagedLoads staged{m, 1024, kBox, stages};
      staged.init_barriers(w);
      w.fence_mbarrier_init();
      co_await staged.run(w, r.count * passes, [&](std::uint32_t i) { return box_at(r.first + (r.start + i) % r.count, x); });
      slowest = std::max(slowest, w.now() - start);
    };
  };
  // The lag modes' measured launch: the leader counts its landed boxes (silicon publishes the count
  // in GMEM); the follower issues box i once the leader's box i + lag has landed.
  std::vector<std::uint32_t> landed(c.sm.count, 0);
  auto follow = [&](Warp& w) -> Task {
    const Role r = plan.measure[w.sm_idx()];
    if (!r.count) co_return;
    const bool leader = r.start == 1;
    const StagedLoads staged{map, 1024, kBox, kStages};
    staged.init_barriers(w);
    w.fence_mbarrier_init();
    for (std::uint32_t i = 0; i < r.count + kStages; ++i) {
      const std::uint32_t s = i % kStages;
      if (i >= kStages) {
        co_await w.mbarrier_wait(staged.barrier(s), ((i - kStages) / kStages) & 1u);
        if (leader) landed[r.pair] = i - kStages + 1;
      }
      if (i >= r.count) continue;
      const auto need = std::min<std::uint32_t>(i + static_cast<std::uint32_t>(lag) + 1, r.count);
      while (!leader && landed[r.pair] < need) co_await w.sleep(kPollCycles);
      w.mbarrier_arrive_expect_tx(staged.barrier(s), kBox);
      w.tma_load(map, SmemAddr{1024 + s * kBox}, staged.barrier(s),
                 TensorCoords{0, static_cast<std::int32_t>(kBoxRows * (r.first + i * plan.box_stride))});
    }
  };
  std::vector<Role> flush_roles(c.sm.count);
  for (std::uint32_t s = 0; s < c.sm.count; ++s) flush_roles[s] = Role{s * (kFlushBoxes / c.sm.count), kFlushBoxes / c.sm.count, 0, s};
  if (flush_first) sim.launch("ubench", launch, stream(flush, flush_roles, 1));
  RunResult r;
  if (lag >= 0) {
    r = sim.launch("ubench", launch, follow);
  } else {
    for (const Phase& p : plan.before) sim.launch("ubench", launch, stream(map, p.roles, p.passes));
    sim.launch("ubench", launch, stream(map, plan.warm, 1));
    slowest = 0;
    r = sim.launch("ubench", launch, stream(map, plan.measure, plan.passes, plan.stages, plan.promoted_column ? 128 : 0));
  }
  return Measured{r.memory.hbm_read_bytes, slowest};
}

// The measured launch's HBM bytes read per pass as a share of the footprint (x 100); with
// `nominal`, of the region allocated (h100_l2_footprint.csv's split rows divide by F MiB, of which
// the 132 slices read 132 x floor(64 F / 132) boxes).
std::int64_t hbm_per_pass_x100(const HardwareConfig& c, const Plan& plan, std::int64_t lag = -1,
                               bool nominal = false) {
  const Measured m = run_plan(c, plan, lag);
  return static_cast<std::int64_t>(static_cast<double>(m.hbm_read_bytes) * 100.0 /
                                   (static_cast<double>(plan.passes) * (nominal ? plan.region : plan.boxes) * kBox));
}

// The measured launch's bytes per cycle of its slowest CTA (h100_l2_partitions.cu's l2_bytes_per_cycle).
std::int64_t bytes_per_cycle(const HardwareConfig& c, const Plan& plan) {
  const Measured m = run_plan(c, plan);
  return static_cast<std::int64_t>(static_cast<double>(plan.boxes) * kBox * plan.passes /
                                   static_cast<double>(std::max<Cycle>(m.slowest_cta, 1)) + 0.5);
}

}  // namespace

std::vector<UbenchScenario> l2_footprint_scenarios() {
  std::vector<UbenchScenario> all = {
      {"l2_footprint_shared_hbm_per_pass_x100", UbenchParam::FootprintMib,
       [](const HardwareConfig& c, std::uint32_t mib) {
         return hbm_per_pass_x100(c, make_plan(c, "footprint_shared", mib), -1, true);
       }},
      {"l2_footprint_split_hbm_per_pass_x100", UbenchParam::FootprintMib,
       [](const HardwareConfig& c, std::uint32_t mib) {
         return hbm_per_pass_x100(c, make_plan(c, "split", mib), -1, true);
       }}};
  // h100_l2_partitions.csv's rows (shared and split again, measured on that GPU).
  for (const char* mode : {"shared", "split", "pair_same", "pair_cross", "half0", "half1", "shared_half0", "check_same",
                           "check_cross", "reref_x", "reref_y", "rerefp_x", "rerefp_y",
                           "rerefc_x", "rerefc_y", "rerefj_x", "rerefj_y"})
    all.push_back({fmt::format("l2_partitions_{}_hbm_per_pass_x100", mode), UbenchParam::FootprintMib,
                   [mode = std::string(mode)](const HardwareConfig& c, std::uint32_t mib) {
                     return hbm_per_pass_x100(c, make_plan(c, mode, mib));
                   }});
  // h200_l2_fabric.csv's rows: one pass over slices warmed by the other die's SMs or by one's own.
  // h200_partition_paces_fabric_rows.csv's: oneway* the other way round; h200_partition_paces_run4_fabric_rows.csv's:
  // the _k, _k128 and _c256 modes (the GEMM's boxes, the promotions).
  for (const char* mode : {"swap", "stay", "oneway", "oneway_stay", "oneway_cold", "oneway_cold_stay", "swap_s8", "stay_s8",
                           "oneway_s8", "oneway_stay_s8", "promo_even", "promo_odd", "oneway_back", "oneway_back_stay",
                           "oneway_back_cold", "oneway_back_cold_stay", "swap_k", "stay_k", "oneway_k", "oneway_back_k",
                           "oneway_stay_k", "oneway_cold_k", "oneway_back_cold_k", "oneway_cold_stay_k", "swap_k128",
                           "oneway_k128", "swap_c256", "oneway_c256"})
    all.push_back({fmt::format("l2_fabric_{}_bytes_per_cycle", mode), UbenchParam::FootprintMib,
                   [mode = std::string(mode)](const HardwareConfig& c, std::uint32_t mib) {
                     return bytes_per_cycle(c, make_plan(c, mode, mib));
                   }});
  for (const char* mode : {"lag_same", "lag_cross", "lagi_same", "lagi_cross"})
    all.push_back({fmt::format("l2_partitions_{}_hbm_per_pass_x100", mode), UbenchParam::LagBoxes,
                   [mode = std::string(mode)](const HardwareConfig& c, std::uint32_t lag) {
                     return hbm_per_pass_x100(c, make_plan(c, mode, 0), lag);
                   }});
  return all;
}

}  // namespace bwsim
