#include "bwsim/config/HardwareConfig.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

// Reads one mapping node strictly: every key must be read once, unknown keys are errors,
// and each value is type- and range-checked. Messages carry the dotted key path.
class StrictMap {
 public:
  StrictMap(YAML::Node node, std::string path, const std::string& origin) : node_(node), path_(std::move(path)), origin_(origin) {
    if (!node_ || !node_.IsMap()) fail(path_.empty() ? "<top level>" : path_, "expected a mapping of keys");
  }

  template <class T>
  void read(const char* key, T& out, T lo, T hi) {
    const std::string p = join(key);
    YAML::Node v = node_[key];
    seen_.insert(key);
    if (!v) fail(p, "missing key");
    scalar(v, p, out, lo, hi);
  }

  // The scalar `v` (at dotted path `p`) as a T within [lo, hi].
  template <class T>
  void scalar(const YAML::Node& v, const std::string& p, T& out, T lo, T hi) const {
    if (!v.IsScalar()) fail(p, "expected a scalar value");
    const std::string text = v.Scalar();
    if constexpr (std::is_same_v<T, std::string>) {
      out = text;
      (void)lo;
      (void)hi;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (text != "true" && text != "false") fail(p, fmt::format("expected true or false, got '{}'", text));
      out = text == "true";
      (void)lo;
      (void)hi;
    } else {
      if constexpr (std::is_integral_v<T>) {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          fail(p, fmt::format("expected a non-negative integer, got '{}'", text));
      }
      T value{};
      try {
        value = v.as<T>();
      } catch (const YAML::Exception&) {
        fail(p, fmt::format("expected a number, got '{}'", text));
      }
      if (value < lo || value > hi) fail(p, fmt::format("value {} is out of range [{}, {}]", text, lo, hi));
      out = value;
    }
  }

  bool has(const char* key) const { return static_cast<bool>(node_[key]); }

  // A sequence of [x, y] number pairs, x strictly descending, each within its range.
  void read_pairs(const char* key, std::vector<std::pair<double, double>>& out, double xlo, double xhi, double ylo,
                  double yhi) {
    const std::string p = join(key);
    YAML::Node v = node_[key];
    seen_.insert(key);
    if (!v) fail(p, "missing key");
    if (!v.IsSequence() || v.size() == 0) fail(p, "expected a list of [x, y] pairs");
    out.clear();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string pi = fmt::format("{}[{}]", p, i);
      if (!v[i].IsSequence() || v[i].size() != 2) fail(pi, "expected a pair [x, y]");
      double x = 0, y = 0;
      try {
        x = v[i][0].as<double>();
        y = v[i][1].as<double>();
      } catch (const YAML::Exception&) {
        fail(pi, "expected two numbers");
      }
      if (x < xlo || x > xhi || y < ylo || y > yhi)
        fail(pi, fmt::format("[{}, {}] is out of range [{}, {}] x [{}, {}]", x, y, xlo, xhi, ylo, yhi));
      if (!out.empty() && x >= out.back().first) fail(pi, "the first values must descend strictly");
      out.emplace_back(x, y);
    }
  }

  // A list of non-negative integers, each within [lo, hi].
  void read_list(const char* key, std::vector<std::uint32_t>& out, std::uint32_t lo, std::uint32_t hi) {
    const std::string p = join(key);
    YAML::Node v = node_[key];
    seen_.insert(key);
    if (!v) fail(p, "missing key");
    if (!v.IsSequence() || v.size() == 0) fail(p, "expected a list of integers");
    out.assign(v.size(), 0);
    for (std::size_t i = 0; i < v.size(); ++i) scalar(v[i], fmt::format("{}[{}]", p, i), out[i], lo, hi);
  }

  StrictMap section(const char* key) {
    seen_.insert(key);
    if (!node_[key]) fail(join(key), "missing section");
    return StrictMap(node_[key], join(key), origin_);
  }

  // Call after reading all keys: any key not read is unknown.
  void finish() const {
    for (const auto& kv : node_) {
      const std::string k = kv.first.as<std::string>();
      if (!seen_.count(k)) fail(join(k.c_str()), "unknown key");
    }
  }

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw ConfigError(fmt::format("{}: {}: {}", origin_, path, what));
  }

 private:
  std::string join(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  YAML::Node node_;
  std::string path_;
  const std::string& origin_;
  std::set<std::string> seen_;
};

constexpr Cycle kMaxLatency = 1'000'000;

void apply_override(YAML::Node root, const std::string& assignment, const std::string& origin) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(fmt::format("--set '{}': expected key=value, e.g. tma.load_latency=400", assignment));
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);
  // yaml-cpp nodes are handles: walk down with copies, assign through the last one.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    if (!cur.IsMap() || !cur[parts[i]]) {
      std::string valid;
      if (cur.IsMap())
        for (const auto& kv : cur) valid += fmt::format("{}{}", valid.empty() ? "" : ", ", kv.first.as<std::string>());
      throw ConfigError(fmt::format("{}: --set {}: no such key in the config; valid keys {}: {}", origin, key,
                                    i == 0 ? "at the top" : fmt::format("of '{}'", parts[i - 1]), valid));
    }
    chain.push_back(cur[parts[i]]);
  }
  if (!chain.back().IsScalar())
    throw ConfigError(fmt::format("{}: --set {}: names a section, not a value", origin, key));
  chain.back() = value;
}

void read_power(StrictMap p, HardwareConfig& c) {
  HardwareConfig::Power& w = c.power;
  p.read("limit_w", w.limit_w, 1.0, 1e5);
  p.read("idle_w", w.idle_w, 0.0, 1e5);
  p.read("tensor_f16_flop_pj", w.tensor_f16_flop_pj, 0.0, 1e3);
  p.read("tensor_f8_flop_pj", w.tensor_f8_flop_pj, 0.0, 1e3);
  p.read("fma_instruction_pj", w.fma_instruction_pj, 0.0, 1e6);
  p.read("alu_instruction_pj", w.alu_instruction_pj, 0.0, 1e6);
  p.read("mufu_instruction_pj", w.mufu_instruction_pj, 0.0, 1e6);
  p.read("cvt_instruction_pj", w.cvt_instruction_pj, 0.0, 1e6);
  p.read("smem_byte_pj", w.smem_byte_pj, 0.0, 1e4);
  p.read("l2_byte_pj", w.l2_byte_pj, 0.0, 1e4);
  p.read("hbm_byte_pj", w.hbm_byte_pj, 0.0, 1e4);
  p.read("tma_op_pj", w.tma_op_pj, 0.0, 1e9);
  p.read("max_clock_ghz", w.max_clock_ghz, 0.1, 10.0);
  p.read("tensor_clock_ghz", w.tensor_clock_ghz, 0.1, 10.0);
  p.read("min_clock_ghz", w.min_clock_ghz, 0.1, 10.0);
  p.read("step_mhz", w.step_mhz, 1.0, 1000.0);
  p.read("period_ms", w.period_ms, 0.01, 1e4);
  p.read<std::string>("clock_controller", w.clock_controller, "", "");  // checked where it is built (power/)
  p.read_pairs("energy_scale", w.energy_scale, 0.1, 10.0, 0.01, 10.0);
  p.finish();
  if (w.tensor_clock_ghz > w.max_clock_ghz) p.fail("power.tensor_clock_ghz", "exceeds power.max_clock_ghz");
  if (w.min_clock_ghz > w.tensor_clock_ghz) p.fail("power.min_clock_ghz", "exceeds power.tensor_clock_ghz");
  if (w.idle_w >= w.limit_w) p.fail("power.idle_w", "not below power.limit_w");
}

// uncertainty: {bands: {TAG: band, ...}, values: {dotted.key: TAG, ...}}; every key a numeric
// value of this config, every tag one of the bands.
void read_uncertainty(StrictMap u, const YAML::Node& root, HardwareConfig& c, const std::string& origin) {
  HardwareConfig::Uncertainty& out = c.uncertainty;
  const YAML::Node bands = root["uncertainty"]["bands"], values = root["uncertainty"]["values"];
  u.section("bands");
  u.section("values");
  u.finish();
  auto fail = [&](const std::string& path, const std::string& what) {
    throw ConfigError(fmt::format("{}: uncertainty.{}: {}", origin, path, what));
  };
  if (!bands.IsMap()) fail("bands", "expected a mapping of provenance tags to relative bands");
  for (const auto& kv : bands) {
    const std::string tag = kv.first.as<std::string>();
    double band = 0;
    try {
      band = kv.second.as<double>();
    } catch (const YAML::Exception&) {
      fail("bands." + tag, "expected a number");
    }
    if (band <= 0 || band >= 1) fail("bands." + tag, fmt::format("band {} is out of range (0, 1)", band));
    out.bands.emplace_back(tag, band);
  }
  if (!values.IsMap()) fail("values", "expected a mapping of dotted config keys to provenance tags");
  for (const auto& kv : values) {
    const std::string key = kv.first.as<std::string>(), tag = kv.second.as<std::string>();
    // Walked through const nodes (a missing key is not inserted) with reset() (assigning a node
    // handle would write the tree).
    YAML::Node n = root;
    bool found = true;
    std::stringstream ss(key);
    for (std::string part; found && std::getline(ss, part, '.');) {
      const YAML::Node next = n.IsMap() ? std::as_const(n)[part] : YAML::Node();
      found = next.IsDefined();
      if (found) n.reset(next);
    }
    double number = 0;
    if (!found || !n.IsScalar() || !YAML::convert<double>::decode(n, number))
      fail("values." + key, "names no numeric value of the config");
    if (std::none_of(out.bands.begin(), out.bands.end(), [&](const auto& b) { return b.first == tag; }))
      fail("values." + key, fmt::format("tag '{}' has no band in uncertainty.bands", tag));
    out.keys.push_back({key, tag, n.Scalar()});
  }
}

HardwareConfig read_config(YAML::Node root, const std::string& origin) {
  HardwareConfig c;
  c.source = origin;
  StrictMap top(root, "", origin);
  top.read<std::string>("name", c.name, "", "");
  top.read("clock_ghz", c.clock_ghz, 0.1, 10.0);

  StrictMap sm = top.section("sm");
  sm.read<std::uint32_t>("count", c.sm.count, 1, 1024);
  sm.read<std::uint32_t>("smem_bytes", c.sm.smem_bytes, 1024, 16u << 20);
  sm.read<std::uint32_t>("max_smem_per_cta", c.sm.max_smem_per_cta, 1024, 16u << 20);
  sm.read<std::uint32_t>("max_threads_per_cta", c.sm.max_threads_per_cta, 32, 4096);
  sm.read<std::uint32_t>("max_warps", c.sm.max_warps, 1, 256);
  sm.read<std::uint32_t>("registers", c.sm.registers, 1024, 1u << 20);
  sm.read<std::uint32_t>("max_ctas", c.sm.max_ctas, 1, 64);
  sm.read<std::uint32_t>("smem_reserved_per_cta", c.sm.smem_reserved_per_cta, 0, 1u << 20);
  sm.read<std::uint32_t>("gpcs", c.sm.gpcs, 1, 1024);
  if (sm.has("tpcs_per_cpc")) sm.read<std::uint32_t>("tpcs_per_cpc", c.sm.tpcs_per_cpc, 0, 64);
  if (sm.has("gpc_tpcs")) sm.read_list("gpc_tpcs", c.sm.gpc_tpcs, 1, 512);
  if (sm.has("tpc_cpcs")) sm.read_list("tpc_cpcs", c.sm.tpc_cpcs, 0, 63);
  sm.finish();
  if (c.sm.gpcs > (c.sm.count + 1) / 2) top.fail("sm.gpcs", "more GPCs than TPCs (2 SMs each)");
  if (!c.sm.gpc_tpcs.empty()) {
    // A measured list fits one chip: a changed sm.count or sm.gpcs needs the list edited too.
    if (c.sm.gpc_tpcs.size() != c.sm.gpcs)
      top.fail("sm.gpc_tpcs", fmt::format("needs one entry per GPC ({}; edit or remove the list with sm.gpcs)", c.sm.gpcs));
    if (std::accumulate(c.sm.gpc_tpcs.begin(), c.sm.gpc_tpcs.end(), 0u) != (c.sm.count + 1) / 2)
      top.fail("sm.gpc_tpcs", fmt::format("the GPCs' TPCs must add up to the chip's {} (2 SMs each; edit or remove the "
                                          "list with sm.count)",
                                          (c.sm.count + 1) / 2));
  }
  if (!c.sm.tpc_cpcs.empty()) {
    if (c.sm.tpcs_per_cpc) top.fail("sm.tpc_cpcs", "names each TPC's CPC: leave out sm.tpcs_per_cpc");
    if (c.sm.gpc_tpcs.empty() || c.sm.tpc_cpcs.size() != (c.sm.count + 1) / 2)
      top.fail("sm.tpc_cpcs", fmt::format("needs sm.gpc_tpcs and one entry per TPC ({}; edit or remove the list with "
                                          "sm.count)",
                                          (c.sm.count + 1) / 2));
    // Each GPC numbers its CPCs 0, 1, ... without a gap (a CPC with no TPC is a typo).
    for (std::uint32_t g = 0, first = 0; g < c.sm.gpc_tpcs.size(); first += c.sm.gpc_tpcs[g++]) {
      std::vector<bool> used(c.sm.gpc_tpcs[g], false);
      for (std::uint32_t t = first; t < first + c.sm.gpc_tpcs[g]; ++t)
        if (c.sm.tpc_cpcs[t] < used.size()) used[c.sm.tpc_cpcs[t]] = true;
        else top.fail("sm.tpc_cpcs", fmt::format("TPC {}: CPC {} in a GPC of {} TPCs", t, c.sm.tpc_cpcs[t], used.size()));
      if (const auto gap = std::find(used.begin(), used.end(), false);
          gap != used.end() && std::find(gap, used.end(), true) != used.end())
        top.fail("sm.tpc_cpcs", fmt::format("GPC {} has no TPC in its CPC {}: number a GPC's CPCs 0, 1, ... without a gap",
                                            g, gap - used.begin()));
    }
  }

  StrictMap dies = top.section("dies");
  dies.read<std::uint32_t>("count", c.dies.count, 1, 2);
  dies.read<std::uint64_t>("interleave_bytes", c.dies.interleave_bytes, 128, 1ull << 30);
  dies.read("link_gbytes_per_second", c.dies.link_gbytes_per_second, 0.0, 1e9);
  dies.read<Cycle>("link_latency", c.dies.link_latency, 0, kMaxLatency);
  dies.read<Cycle>("far_hit_latency", c.dies.far_hit_latency, 0, kMaxLatency);
  dies.read("promotion_request_share", c.dies.promotion_request_share, 0.0, 4.0);
  if (dies.has("of_gpc")) dies.read_list("of_gpc", c.dies.of_gpc, 0, 1);
  dies.finish();
  if (c.dies.count == 1) c.dies.of_gpc.clear();  // one die (say --set dies.count=1, one L2): every GPC is die 0's
  if (!c.dies.of_gpc.empty()) {
    if (c.dies.of_gpc.size() != c.sm.gpcs) top.fail("dies.of_gpc", fmt::format("needs one entry per GPC ({})", c.sm.gpcs));
    for (std::uint32_t d = 0; d < c.dies.count; ++d)
      if (std::find(c.dies.of_gpc.begin(), c.dies.of_gpc.end(), d) == c.dies.of_gpc.end())
        top.fail("dies.of_gpc", fmt::format("die {} has no GPC", d));
  }
  if (c.dies.interleave_bytes & (c.dies.interleave_bytes - 1))
    top.fail("dies.interleave_bytes", "must be a power of 2");
  if (c.sm.gpc_tpcs.empty() && c.sm.gpcs % c.dies.count)
    top.fail("sm.gpcs", "must be a multiple of dies.count (each die has its own GPCs), or sm.gpc_tpcs and dies.of_gpc "
                        "must say how they are laid out");
  if (!c.sm.gpc_tpcs.empty() && c.dies.count > 1 && c.dies.of_gpc.empty() && c.sm.gpcs % c.dies.count)
    top.fail("dies.of_gpc", "needed with sm.gpc_tpcs when sm.gpcs is not a multiple of dies.count");
  if (c.dies.count > 1 && c.dies.link_gbytes_per_second <= 0)
    top.fail("dies.link_gbytes_per_second", "must be positive on a chip of more than one die");

  StrictMap launch = top.section("launch");
  launch.read<Cycle>("latency", c.launch.latency, 0, kMaxLatency);
  launch.finish();

  StrictMap pipes = top.section("pipes");
  pipes.read<std::uint32_t>("fma_lanes", c.pipes.fma_lanes, 4, 4096);
  pipes.read<std::uint32_t>("alu_lanes", c.pipes.alu_lanes, 4, 4096);
  pipes.read<std::uint32_t>("mufu_lanes", c.pipes.mufu_lanes, 4, 4096);
  pipes.read<std::uint32_t>("cvt_lanes", c.pipes.cvt_lanes, 4, 4096);
  pipes.read<std::uint32_t>("fma_latency", c.pipes.fma_latency, 1, 1000);
  pipes.read<std::uint32_t>("alu_latency", c.pipes.alu_latency, 1, 1000);
  pipes.read<std::uint32_t>("mufu_latency", c.pipes.mufu_latency, 1, 1000);
  pipes.read<std::uint32_t>("cvt_latency", c.pipes.cvt_latency, 1, 1000);
  pipes.read("paired_fp32", c.pipes.paired_fp32, false, true);
  pipes.read("minmax3", c.pipes.minmax3, false, true);
  pipes.finish();

  StrictMap l2 = top.section("l2");
  l2.read<std::string>("policy", c.l2.policy, "", "");  // the name is checked where the model is built (hw/)
  l2.read<std::uint64_t>("bytes", c.l2.bytes, 1024, 1ull << 40);
  l2.read<std::uint32_t>("line_bytes", c.l2.line_bytes, 16, 4096);
  l2.read<std::uint32_t>("block_rows", c.l2.block_rows, 1, 256);
  if (l2.has("ways")) l2.read<std::uint32_t>("ways", c.l2.ways, 1, 1024);
  if (c.l2.policy.starts_with("set_") && c.l2.ways == 0)
    l2.fail("l2.ways", fmt::format("the set-associative policy ({}) needs its ways per set", c.l2.policy));
  if (l2.has("page_bytes")) {
    l2.read<std::uint64_t>("page_bytes", c.l2.page_bytes, 0, 1ull << 30);
    if (c.l2.page_bytes != 0 && (!std::has_single_bit(c.l2.page_bytes) || !std::has_single_bit(c.l2.line_bytes)))
      l2.fail("l2.page_bytes", fmt::format("{} and l2.line_bytes {} must be powers of two", c.l2.page_bytes, c.l2.line_bytes));
    if (c.l2.page_bytes != 0 && c.l2.page_bytes < c.l2.line_bytes)
      l2.fail("l2.page_bytes", fmt::format("a page ({} bytes) holds at least one line ({})", c.l2.page_bytes, c.l2.line_bytes));
  }
  l2.read("gbytes_per_second", c.l2.gbytes_per_second, 1.0, 1e9);
  l2.read("delivery_gbytes_per_second", c.l2.delivery_gbytes_per_second, 1.0, 1e9);
  l2.read("coalesce_in_flight", c.l2.coalesce_in_flight, false, true);
  if (l2.has("join_window_cycles")) l2.read<std::uint32_t>("join_window_cycles", c.l2.join_window_cycles, 0, 1u << 30);
  if (l2.has("join_queue_share")) l2.read("join_queue_share", c.l2.join_queue_share, 0.0, 1.0);
  if (c.l2.join_window_cycles && !c.l2.coalesce_in_flight)
    l2.fail("l2.join_window_cycles", "a join window needs l2.coalesce_in_flight: true");
  if (c.l2.join_queue_share > 0 && !c.l2.join_window_cycles)
    l2.fail("l2.join_queue_share", "a queue share widens a join window: it needs l2.join_window_cycles");
  if (l2.has("join_scope")) {
    std::string scope;
    l2.read<std::string>("join_scope", scope, "", "");
    if (scope != "chip" && scope != "gpc")
      l2.fail("l2.join_scope", fmt::format("'{}' is not chip (a read joins any SM's transfer) or gpc (its GPC's)", scope));
    c.l2.join_within_gpc = scope == "gpc";
    if (c.l2.join_within_gpc && !c.l2.coalesce_in_flight)
      l2.fail("l2.join_scope", "joining within a GPC needs l2.coalesce_in_flight: true");
  }
  l2.read("store_link_cost", c.l2.store_link_cost, 1.0, 64.0);
  l2.read("reduce_link_cost", c.l2.reduce_link_cost, 1.0, 64.0);
  l2.read("fill_link_cost", c.l2.fill_link_cost, 1.0, 64.0);
  if (l2.has("cpc_load_bytes_in_flight"))
    l2.read<std::uint64_t>("cpc_load_bytes_in_flight", c.l2.cpc_load_bytes_in_flight, 0, 1ull << 32);
  l2.finish();
  if (c.l2.cpc_load_bytes_in_flight && !c.sm.tpcs_per_cpc && c.sm.tpc_cpcs.empty())
    top.fail("l2.cpc_load_bytes_in_flight", "needs sm.tpcs_per_cpc or sm.tpc_cpcs (which SMs share a CPC)");
  if (c.l2.bytes / (c.l2.line_bytes * static_cast<std::uint64_t>(c.l2.block_rows)) >= (1ull << 31))
    top.fail("l2.bytes",
             "more than 2^31 residency blocks (l2.block_rows rows of one line each): a smaller L2, longer lines or "
             "taller blocks");

  StrictMap hbm = top.section("hbm");
  hbm.read<std::string>("model", c.hbm.model, "", "");
  hbm.read("gbytes_per_second", c.hbm.gbytes_per_second, 1.0, 1e9);
  hbm.read<Cycle>("latency", c.hbm.latency, 0, kMaxLatency);
  if (hbm.has("loaded")) {
    StrictMap loaded = hbm.section("loaded");
    HardwareConfig::Hbm::Loaded& l = c.hbm.loaded;
    l.present = true;
    loaded.read<Cycle>("window", l.window, 1, kMaxLatency);
    loaded.read<Cycle>("step_latency", l.step_latency, 0, kMaxLatency);
    loaded.read("step_load", l.step_load, 1e-6, 1.0);
    loaded.read<Cycle>("queue_latency", l.queue_latency, 0, kMaxLatency);
    loaded.read("max_load", l.max_load, 0.0, 0.999);
    loaded.finish();
  }
  hbm.finish();
  if (c.sm.max_smem_per_cta > c.sm.smem_bytes)
    top.fail("sm.max_smem_per_cta", "exceeds sm.smem_bytes");

  StrictMap warp = top.section("warp");
  warp.read<Cycle>("issue_cycles", c.warp.issue_cycles, 0, 64);
  warp.read<Cycle>("named_barrier_latency", c.warp.named_barrier_latency, 0, kMaxLatency);
  warp.read<Cycle>("udiv_latency", c.warp.udiv_latency, 0, kMaxLatency);
  warp.finish();

  StrictMap smem = top.section("smem");
  smem.read<std::uint32_t>("bytes_per_cycle", c.smem.bytes_per_cycle, 1, 4096);
  smem.read<Cycle>("instruction_cycles", c.smem.instruction_cycles, 0, 64);
  smem.read<std::uint32_t>("warp_bytes_per_cycle", c.smem.warp_bytes_per_cycle, 1, 4096);
  smem.read<Cycle>("proxy_fence_cycles", c.smem.proxy_fence_cycles, 0, 1024);
  smem.finish();

  StrictMap mbar = top.section("mbarrier");
  mbar.read<Cycle>("arrive_latency", c.mbarrier.arrive_latency, 0, kMaxLatency);
  mbar.read<Cycle>("wakeup_latency", c.mbarrier.wakeup_latency, 0, kMaxLatency);
  mbar.finish();

  StrictMap tma = top.section("tma");
  tma.read<Cycle>("issue_cycles", c.tma.issue_cycles, 0, 1024);
  tma.read<Cycle>("load_latency", c.tma.load_latency, 0, kMaxLatency);
  tma.read<Cycle>("store_latency", c.tma.store_latency, 0, kMaxLatency);
  tma.read<Cycle>("descriptor_fetch_latency", c.tma.descriptor_fetch_latency, 0, kMaxLatency);
  tma.read<std::uint32_t>("bytes_per_cycle", c.tma.bytes_per_cycle, 1, 65536);
  tma.read("store_bytes_per_cycle", c.tma.store_bytes_per_cycle, 1.0, 65536.0);
  tma.read("reduce_bytes_per_cycle", c.tma.reduce_bytes_per_cycle, 1.0, 65536.0);
  tma.read<Cycle>("multicast_extra_latency", c.tma.multicast_extra_latency, 0, kMaxLatency);
  tma.read<std::uint32_t>("miss_bytes_per_cycle", c.tma.miss_bytes_per_cycle, 1, 65536);
  tma.read<Cycle>("miss_box_cycles", c.tma.miss_box_cycles, 0, kMaxLatency);
  tma.finish();

  StrictMap tmem = top.section("tmem");
  tmem.read<std::uint32_t>("columns", c.tmem.columns, 0, 512);  // 0: an SM without TMEM and tcgen05 (SM90)
  tmem.read<Cycle>("alloc_cycles", c.tmem.alloc_cycles, 0, kMaxLatency);
  tmem.read<Cycle>("access_latency", c.tmem.access_latency, 0, kMaxLatency);
  tmem.read<std::uint32_t>("bytes_per_cycle", c.tmem.bytes_per_cycle, 1, 65536);
  tmem.finish();
  if ((c.tmem.columns & (c.tmem.columns - 1)) || (c.tmem.columns && c.tmem.columns < 32))
    top.fail("tmem.columns", "must be a power of 2 in 32..512, or 0 for an SM without tensor memory");

  StrictMap mma = top.section("mma");
  mma.read<Cycle>("issue_cycles", c.mma.issue_cycles, 0, 1024);
  // Without TMEM there is no tcgen05.mma: its rates may be 0.
  const std::uint32_t min_rate = c.tmem.columns ? 256 : 0;
  mma.read<std::uint32_t>("f16_flops_per_cycle", c.mma.f16_flops_per_cycle, min_rate, 1u << 20);
  mma.read<std::uint32_t>("tf32_flops_per_cycle", c.mma.tf32_flops_per_cycle, min_rate, 1u << 20);
  mma.read<std::uint32_t>("f8f6f4_flops_per_cycle", c.mma.f8f6f4_flops_per_cycle, min_rate, 1u << 20);
  mma.read<std::uint32_t>("i8_ops_per_cycle", c.mma.i8_ops_per_cycle, min_rate, 1u << 20);
  mma.read<std::uint32_t>("f4_flops_per_cycle", c.mma.f4_flops_per_cycle, min_rate, 1u << 20);
  mma.read<Cycle>("block_scale_latency", c.mma.block_scale_latency, 0, kMaxLatency);
  mma.read<Cycle>("shift_cycles", c.mma.shift_cycles, 0, kMaxLatency);
  mma.read<Cycle>("shift_latency", c.mma.shift_latency, 0, kMaxLatency);
  mma.read<std::uint32_t>("smem_bytes_per_cycle", c.mma.smem_bytes_per_cycle, 1, 65536);
  mma.read<Cycle>("latency_ss", c.mma.latency_ss, 0, kMaxLatency);
  mma.read<Cycle>("latency_ss_m64", c.mma.latency_ss_m64, 0, kMaxLatency);
  mma.read<Cycle>("latency_ts", c.mma.latency_ts, 0, kMaxLatency);
  mma.read<Cycle>("latency_2cta_ss", c.mma.latency_2cta_ss, 0, kMaxLatency);
  mma.read<Cycle>("latency_2cta_ss_m128", c.mma.latency_2cta_ss_m128, 0, kMaxLatency);
  mma.read<Cycle>("latency_2cta_ts", c.mma.latency_2cta_ts, 0, kMaxLatency);
  mma.read<Cycle>("latency_2cta_ts_m128", c.mma.latency_2cta_ts_m128, 0, kMaxLatency);
  mma.finish();

  StrictMap wgmma = top.section("wgmma");
  wgmma.read<Cycle>("issue_cycles", c.wgmma.issue_cycles, 0, 1024);
  wgmma.read<std::uint32_t>("f16_flops_per_cycle", c.wgmma.f16_flops_per_cycle, 0, 1u << 20);
  wgmma.read<std::uint32_t>("f8_flops_per_cycle", c.wgmma.f8_flops_per_cycle, 0, 1u << 20);
  wgmma.read<std::uint32_t>("smem_bytes_per_cycle", c.wgmma.smem_bytes_per_cycle, 1, 65536);
  wgmma.read<Cycle>("latency_ss", c.wgmma.latency_ss, 0, kMaxLatency);
  wgmma.read<Cycle>("latency_rs", c.wgmma.latency_rs, 0, kMaxLatency);
  wgmma.finish();
  if ((c.wgmma.f16_flops_per_cycle == 0) != (c.wgmma.f8_flops_per_cycle == 0))
    top.fail("wgmma", "f16_flops_per_cycle and f8_flops_per_cycle are both 0 (no wgmma) or both set");

  StrictMap cl = top.section("cluster");
  cl.read<std::uint32_t>("max_ctas_portable", c.cluster.max_ctas_portable, 1, 16);
  cl.read<std::uint32_t>("max_ctas", c.cluster.max_ctas, 1, 16);
  cl.read<Cycle>("barrier_latency", c.cluster.barrier_latency, 0, kMaxLatency);
  cl.read<Cycle>("barrier_release_latency", c.cluster.barrier_release_latency, 0, kMaxLatency);
  cl.read<Cycle>("barrier_release_per_cta", c.cluster.barrier_release_per_cta, 0, kMaxLatency);
  cl.read<Cycle>("remote_arrive_latency", c.cluster.remote_arrive_latency, 0, kMaxLatency);
  cl.read<Cycle>("remote_arrive_latency_pair", c.cluster.remote_arrive_latency_pair, 0, kMaxLatency);
  cl.read<Cycle>("dsmem_load_latency", c.cluster.dsmem_load_latency, 0, kMaxLatency);
  cl.read<Cycle>("dsmem_load_latency_pair", c.cluster.dsmem_load_latency_pair, 0, kMaxLatency);
  cl.read<Cycle>("dsmem_store_latency", c.cluster.dsmem_store_latency, 0, kMaxLatency);
  cl.finish();
  if (c.cluster.max_ctas_portable > c.cluster.max_ctas)
    top.fail("cluster.max_ctas_portable", "exceeds cluster.max_ctas");

  if (top.has("power")) read_power(top.section("power"), c);
  if (top.has("uncertainty")) read_uncertainty(top.section("uncertainty"), root, c, origin);
  top.finish();
  return c;
}

}  // namespace

double HardwareConfig::Uncertainty::band(const std::string& tag) const {
  for (const auto& [t, b] : bands)
    if (t == tag) return b;
  return 0;
}

namespace {

HardwareConfig parse_root(const std::string& text, const std::string& origin, const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: not valid YAML: {}", origin, e.what()));
  }
  if (!root || !root.IsMap()) throw ConfigError(fmt::format("{}: expected a mapping of config keys", origin));
  for (const auto& o : overrides) apply_override(root, o, origin);
  return read_config(root, origin);
}

}  // namespace

HardwareConfig parse_config(const std::string& yaml_text, const std::string& origin,
                            const std::vector<std::string>& overrides) {
  return parse_root(yaml_text, origin, overrides);
}

namespace {
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open config file", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void collect_scalars(const YAML::Node& node, const std::string& prefix,
                     std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& kv : node) {
    const std::string key = prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>();
    if (key == "uncertainty") continue;
    if (kv.second.IsMap())
      collect_scalars(kv.second, key, out);
    else if (kv.second.IsScalar())
      out.emplace_back(key, kv.second.as<std::string>());
  }
}
}  // namespace

HardwareConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_root(read_text(path), path, overrides);
}

std::vector<std::pair<std::string, std::string>> config_values(const std::string& path,
                                                               const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(read_text(path));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: not valid YAML: {}", path, e.what()));
  }
  if (!root || !root.IsMap()) throw ConfigError(fmt::format("{}: expected a mapping of config keys", path));
  for (const auto& o : overrides) apply_override(root, o, path);
  std::vector<std::pair<std::string, std::string>> out;
  collect_scalars(root, "", out);
  return out;
}

}  // namespace bwsim
