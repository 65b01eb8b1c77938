// The statistics registry: units declare each statistic once, every output renders from the
// declarations, and the documented table cannot drift from them.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "TestSupport.hpp"
#include "bwsim/kernel/KernelRegistry.hpp"
#include "bwsim/kernel/StatRegistry.hpp"
#include "bwsim/report/StatsOutput.hpp"

namespace bwsim {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The JSON value under a statistic's dotted name.
const nlohmann::json& at(const nlohmann::json& j, const StatInfo& info) {
  return info.group().empty() ? j.at(info.name) : j.at(info.group()).at(info.short_name());
}

TEST(StatsTableTest, TheCommittedDocsTableIsWhatTheRegistryGenerates) {
  const std::string generated = stats_markdown(stat_registry());
  EXPECT_EQ(read_file(BWSIM_SOURCE_DIR "/docs/stats.md"), generated)
      << "regenerate it: build/bwsim stats-table > docs/stats.md";
  const test::Outcome o = test::bwsim("stats-table");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.output, generated);
}

TEST(StatRegistryTest, NamesAreUniqueAndEveryStatisticSaysWhatItCounts) {
  std::set<std::string> names;
  for (const StatRegistry::Entry& e : stat_registry().entries()) {
    EXPECT_TRUE(names.insert(e.info.name).second) << "declared twice: " << e.info.name;
    EXPECT_FALSE(e.info.description.empty()) << e.info.name;
    EXPECT_EQ(e.info.per_sm, static_cast<bool>(e.per_sm)) << e.info.name;
  }
}

struct Toy {
  std::uint64_t hits = 0, reads = 0;
  double flop = 0;
  Cycle busy = 0;
};

StatGroup<Toy> toy_group() {
  StatGroup<Toy> g("toy");
  g.counter("hits", StatUnit::Count, "hits", &Toy::hits)
      .counter("reads", StatUnit::Count, "reads", &Toy::reads)
      .counter("flop", StatUnit::Flop, "flop", &Toy::flop)
      .formula("hit_rate", StatUnit::Fraction, "hits over reads",
               [](const Toy& t, const StatContext&) -> StatValue { return double(t.hits) / double(t.reads); })
      .formula("busy_fraction", StatUnit::Fraction, "busy over the instances' cycles",
               [](const Toy& t, const StatContext& c) -> StatValue { return c.busy_fraction(t.busy); })
      .counter("busy", StatUnit::Cycles, "busy", &Toy::busy);
  return g;
}

TEST(StatGroupTest, TheTotalAddsEveryDeclaredCounterAndFormulasSeeTheTotal) {
  const StatGroup<Toy> g = toy_group();
  const Toy total = g.total({{1, 4, 0.5, 10}, {2, 4, 1.5, 30}});
  EXPECT_EQ(total.hits, 3u);
  EXPECT_EQ(total.reads, 8u);
  EXPECT_EQ(total.flop, 2.0);
  EXPECT_EQ(total.busy, 40u);
  const StatContext two_sms{.cycles = 100, .instances = 2, .clock_ghz = 1.0};
  EXPECT_EQ(g.stats()[0].info.name, "toy.hits");
  EXPECT_TRUE(std::holds_alternative<std::uint64_t>(g.stats()[0].value(total, two_sms)));
  EXPECT_TRUE(std::holds_alternative<double>(g.stats()[2].value(total, two_sms)));  // FLOP stay real
  EXPECT_EQ(as_double(g.stats()[3].value(total, two_sms)), 3.0 / 8.0);
  EXPECT_EQ(as_double(g.stats()[4].value(total, two_sms)), 40.0 / 200.0);  // 2 SMs x 100 cycles
}

TEST(StatsOutputTest, JsonNestsAtTheDotAndTheSummaryLeavesOutGroupsThatAreAllZero) {
  const StatGroup<Toy> g = toy_group();
  const StatInfo run{"cycles", StatUnit::Cycles, "the run"};
  const Toy t{1, 4, 0, 0};
  std::vector<StatSample> samples{{&run, StatValue{std::uint64_t{123}}, {}}};
  for (const auto& s : g.stats()) samples.push_back({&s.info, s.value(t, StatContext{.cycles = 123}), {}});
  const nlohmann::json j = stats_json(samples);
  EXPECT_EQ(j.at("cycles"), 123u);
  EXPECT_EQ(j.at("toy").at("hits"), 1u);
  EXPECT_EQ(j.at("toy").at("hit_rate"), 0.25);
  EXPECT_EQ(stats_summary(samples),
            "run       cycles 123\n"
            "toy       hits 1, reads 4, flop 0, hit_rate 25.0%, busy_fraction 0.0%, busy 0\n");
  for (StatSample& s : samples)
    if (s.info != &run) s.value = StatValue{0.0};
  EXPECT_EQ(stats_summary(samples), "run       cycles 123\n");
}

// A gemm on 2 SMs: every per-SM counter is the sum of its SMs, with one value per SM of the chip.
TEST(StatRegistryTest, APerSmCounterIsTheSumOfTheSmsValues) {
  const KernelInfo& gemm = *find_kernel("gemm");
  KernelRequest req{test::b200_config(), SimOptions{.mode = Mode::Timing}, {}, false};
  for (const KernelParam& p : gemm.params) req.args.set(p.name, p.default_value);
  req.args.set("ctas", "2");
  const RunResult run = gemm.run(req).run;
  ASSERT_EQ(run.sms_used, 2u);
  for (const StatSample& s : stat_registry().sample(run)) {
    if (!s.info->per_sm) continue;
    ASSERT_EQ(s.per_sm.size(), test::b200_config().sm.count) << s.info->name;
    if (s.info->formula) continue;
    double sum = 0;
    for (const StatValue& v : s.per_sm) sum += as_double(v);
    EXPECT_EQ(sum, as_double(s.value)) << s.info->name;
  }
}

// --json renders every declared statistic with the value the registry reads from the same run.
TEST(StatRegistryTest, TheJsonSummaryCarriesEveryStatisticWithTheRegistrysValue) {
  const KernelInfo& gemm = *find_kernel("gemm");
  KernelRequest req{test::b200_config(), SimOptions{.mode = Mode::Timing}, {}, false};
  for (const KernelParam& p : gemm.params) req.args.set(p.name, p.default_value);
  for (const char* dim : {"m", "n", "k"}) req.args.set(dim, "256");
  const std::vector<StatSample> expect = stat_registry().sample(gemm.run(req).run);
  const test::Outcome o =
      test::bwsim("run gemm --config " BWSIM_SOURCE_DIR "/sim_configs/b200.yaml --m 256 --n 256 --k 256 --json "
                  "--power-window-us 0");  // no power windows: the same events as the library run
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json j = nlohmann::json::parse(o.output);
  const nlohmann::json rendered = stats_json(expect);
  for (const StatSample& s : expect) {
    ASSERT_NO_THROW(at(j, *s.info)) << s.info->name << " missing";
    if (!s.info->host_time) {
      EXPECT_EQ(at(j, *s.info), at(rendered, *s.info)) << s.info->name;
    }
  }
  EXPECT_GT(j.at("tflops").get<double>(), 0.0);  // and the kernel's own figures
}

}  // namespace
}  // namespace bwsim
