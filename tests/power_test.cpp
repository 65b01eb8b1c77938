// The power model (power/PowerModel): energy accounting by hand, power in windows of a run, the
// energy scale, the clock controller's steps on a constructed load, config errors, the B200's
// scaled energies, and the sustained GEMMs against the H100 and the H200
// (tools/calibration/h100_gemm_sustained.csv, h200_gemm_sustained.csv).
#include <gtest/gtest.h>

#include <cmath>

#include "TestSupport.hpp"
#include "bwsim/core/Csv.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/ModelChoices.hpp"
#include "bwsim/kernels/GemmSm90.hpp"
#include "bwsim/power/PowerModel.hpp"

namespace bwsim {
namespace {

HardwareConfig h100() { return load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml"); }

TEST(PowerModelTest, EnergyOfARunIsItsCountsTimesTheConfigEnergies) {
  const HardwareConfig cfg = h100();
  RunResult run;
  run.cycles = 1000;
  run.wgmma.flops = 1e6;
  run.wgmma.f8_flops = 2e5;  // of those
  run.pipes.fma_busy_cycles = 100;  // 128 lanes: 100 warp instructions
  run.pipes.alu_busy_cycles = 100;  // 64 lanes: 50
  run.pipes.smem_bytes = 1000;
  run.memory.l2_read_bytes = 100000;
  run.memory.hbm_read_bytes = 10000;
  run.tma.loads = 10;
  const KernelEnergy e = energy_of(run, cfg);
  // SM: 8e5 x 0.960 + 2e5 x 0.520 + 100 x 424 + 50 x 482 + 1000 x 5.08 = 768000 + 104000 + 42400
  // + 24100 + 5080 pJ.
  EXPECT_NEAR(e.sm_pj_per_cycle, 943580.0 / 1000, 1e-9);
  // Memory: 1e5 x 16.83 + 1e4 x 65.3 + 10 x 28600 = 1683000 + 653000 + 286000 pJ.
  EXPECT_NEAR(e.memory_pj_per_cycle, 2622000.0 / 1000, 1e-9);
  EXPECT_TRUE(e.tensor);
  const PowerModel model(cfg.power);
  EXPECT_DOUBLE_EQ(model.start_clock_ghz(e), 1.860);
  // At 1.86 GHz (scale 1): 120.7 + (943.58 + 2622) x 1.86e-3 W.
  EXPECT_NEAR(model.power_w(e, 1.86), 120.7 + 3565.58 * 1.86e-3, 1e-9);
}

TEST(PowerModelTest, TheB200EnergiesAreTheH100sScaledAsTheConfigStates) {
  // b200.yaml: no B200 unit energies exist, so the H100's are scaled by the boards' ratio of TDP
  // to dense peak (bf16 1000 W / 2.25 PFLOP/s against 700 W / 0.989) and idle by the TDP ratio.
  const HardwareConfig b200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  const HardwareConfig::Power& p = b200.power, &h = h100().power;
  EXPECT_NEAR(p.tensor_f16_flop_pj, h.tensor_f16_flop_pj * (1000 / 2.25e15) / (700 / 0.989e15), 0.001);
  EXPECT_NEAR(p.tensor_f8_flop_pj, h.tensor_f8_flop_pj * (1000 / 4.5e15) / (700 / 1.979e15), 0.001);
  EXPECT_NEAR(p.idle_w, h.idle_w * 1000 / 700, 0.5);
  EXPECT_EQ(p.limit_w, 1000);
  // A hand-sized B200 run at bf16 peak rate for its SMs: 148 x 8192 FLOP per cycle is 0.603 pJ
  // x 1212416 = 731 nJ per cycle, 1357 W at 1.856 GHz: over the limit, so the clock falls.
  RunResult run;
  run.cycles = 1000;
  run.mma.flops = 148.0 * 8192 * 1000;
  const KernelEnergy e = energy_of(run, b200);
  const PowerModel model(p);
  EXPECT_NEAR(model.power_w(e, 1.856), 172 + 0.603 * 148 * 8192 * 1.856e-3, 1e-6);
  const SustainedRun s = sustain(e, p, 2.0);
  EXPECT_LT(s.clock_ghz, 1.856);
  EXPECT_LE(s.power_w, 1000.0);
}

TEST(PowerModelTest, TheWindowsEnergyAddsUpToTheRunsAndThePeakIsAtLeastTheMean) {
  const HardwareConfig cfg = h100();
  const SimOptions options{.mode = Mode::Timing, .check_races = false, .snapshot_cycles = 20000};
  const RunResult run = run_gemm_sm90(cfg, options, GemmSm90Params{.m = 2048, .n = 2048, .k = 2048}, false).run;
  const PowerModel model(cfg.power);
  const KernelEnergy e = energy_of(run, cfg);
  const double ghz = model.start_clock_ghz(e);
  const std::vector<WindowPower> windows = window_power(run, cfg, ghz);
  ASSERT_EQ(windows.size(), (run.cycles + 19999) / 20000);  // snapshots at 0, 20000, ... and the end
  double joules = 0, peak = 0;
  for (const WindowPower& w : windows) {
    joules += w.power_w * static_cast<double>(w.end - w.begin) / (ghz * 1e9);
    peak = std::max(peak, w.power_w);
  }
  const double mean = model.power_w(e, ghz);
  EXPECT_NEAR(joules, mean * static_cast<double>(run.cycles) / (ghz * 1e9), 1e-9 * joules);
  EXPECT_GT(peak, mean);  // the prologue and the tail draw less than the steady state
}

TEST(PowerModelTest, SnapshotsNeverKeepADeadlockedRunAlive) {
  Simulator sim(test::unit_config(), SimOptions{.mode = Mode::Timing, .snapshot_cycles = 100});
  EXPECT_THROW(sim.launch("stuck", LaunchConfig{.grid_ctas = 1, .block_threads = 32, .dynamic_smem_bytes = 64},
                          [](Warp& w) -> Task {
                            w.mbarrier_init(MBarrierRef{0}, 1, "never");
                            co_await w.mbarrier_wait(MBarrierRef{0}, 0);
                          }),
               DeadlockError);
}

TEST(PowerModelTest, TheEnergyScaleInterpolatesItsPointsAndExtendsTheLastSegment) {
  const HardwareConfig cfg = h100();
  const PowerModel model(cfg.power);
  EXPECT_NEAR(model.energy_scale(1.860), 1.0, 1e-12);
  EXPECT_NEAR(model.energy_scale((1.755 + 1.593) / 2), (0.847 + 0.695) / 2, 1e-12);
  // Below 1.562: along (1.593, 0.695) -> (1.562, 0.658), slope 0.037 / 0.031 per GHz.
  EXPECT_NEAR(model.energy_scale(1.5), 0.658 - 0.062 * 0.037 / 0.031, 1e-12);
  // Above 1.860: along the first segment, slope 0.153 / 0.105.
  EXPECT_NEAR(model.energy_scale(1.98), 1.0 + 0.12 * 0.153 / 0.105, 1e-12);
}

// A board of 100 W idle, a 200 W limit, 0.5..2.0 GHz in 100 MHz steps every 10 ms, a flat energy
// scale, under `controller`.
HardwareConfig::Power step_board(const char* controller) {
  HardwareConfig::Power p;
  p.limit_w = 200;
  p.idle_w = 100;
  p.max_clock_ghz = p.tensor_clock_ghz = 2.0;
  p.min_clock_ghz = 0.5;
  p.step_mhz = 100;
  p.period_ms = 10;
  p.clock_controller = controller;
  p.energy_scale = {{2.0, 1.0}, {1.0, 1.0}};
  return p;
}

// A kernel of 1e6 cycles at 1e5 pJ per cycle: 100 W per GHz on top of the idle power.
KernelEnergy hundred_watts_per_ghz() {
  KernelEnergy e;
  e.sm_pj_per_cycle = 1e5;
  e.cycles = 1'000'000;
  return e;
}

// 300 W at the start clock against the 200 W limit.
TEST(PowerModelTest, TheControllerStepsDownUntilThePowerIsWithinTheLimitAndStaysThere) {
  const SustainedRun r = sustain(hundred_watts_per_ghz(), step_board("limit_step"), 0.15);
  ASSERT_EQ(r.trace.size(), 15u);
  // 300 W at 2.0 GHz: one step down per period to 1.0 GHz (200 W, within); 1.1 would be 210 W.
  for (std::size_t i = 0; i < r.trace.size(); ++i) {
    const double ghz = i <= 10 ? 2.0 - 0.1 * static_cast<double>(i) : 1.0;
    EXPECT_NEAR(r.trace[i].clock_ghz, ghz, 1e-9) << i;
    EXPECT_NEAR(r.trace[i].power_w, 100 + 100 * ghz, 1e-6) << i;
  }
  EXPECT_NEAR(r.peak_power_w, 300, 1e-9);
  EXPECT_NEAR(r.seconds_at_start_clock, 0.01, 1e-12);
  EXPECT_NEAR(r.seconds_limited, 0.14, 1e-12);
  // The second half (t >= 0.075 s): periods 8..14 at 1.2, 1.1, 1.0 x 5.
  EXPECT_NEAR(r.clock_ghz, (1.2 + 1.1 + 5 * 1.0) / 7, 1e-9);
  // Kernels of 1e6 cycles: 1 ms each at 1.0 GHz ... per-period count ghz x 10 ms / 1 ms.
  EXPECT_NEAR(r.kernel_seconds, 0.07 / ((1.2 + 1.1 + 5.0) * 10), 1e-12);
}

// The same load under the "fixed" controller: the start clock throughout, over the limit.
TEST(PowerModelTest, TheFixedControllerHoldsTheStartClockOverTheLimit) {
  const SustainedRun r = sustain(hundred_watts_per_ghz(), step_board("fixed"), 0.05);
  ASSERT_EQ(r.trace.size(), 5u);
  for (const ClockSample& s : r.trace) EXPECT_DOUBLE_EQ(s.clock_ghz, 2.0);
  EXPECT_NEAR(r.power_w, 300, 1e-9);
  EXPECT_NEAR(r.seconds_at_start_clock, 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(r.seconds_limited, 0.0);
  EXPECT_NEAR(r.kernel_seconds, 0.5e-3, 1e-12);  // 1e6 cycles at 2 GHz
}

TEST(PowerModelTest, AnUnknownClockControllerIsRejectedWithTheValidNames) {
  try {
    model_choices(load_config(BWSIM_SOURCE_DIR "/sim_configs/h100.yaml", {"power.clock_controller=pid"}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("power.clock_controller: unknown model 'pid'; the valid names are limit_step, fixed"),
              std::string::npos)
        << e.what();
  }
}

TEST(PowerModelTest, AConfigWithABadPowerSectionIsRejectedNamingTheKey) {
  const std::string base = BWSIM_SOURCE_DIR "/sim_configs/h100.yaml";
  EXPECT_THROW(
      {
        try {
          load_config(base, {"power.energy_scale=3"});
        } catch (const ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("power.energy_scale"), std::string::npos) << e.what();
          throw;
        }
      },
      ConfigError);
  EXPECT_THROW(load_config(base, {"power.tensor_clock_ghz=2.5"}), ConfigError);
  EXPECT_THROW(load_config(base, {"power.idle_w=800"}), ConfigError);
}

// The twin run back to back for 10 s (run_power.sh): steady SM clock (clock64 / %globaltimer)
// and wall time per GEMM, one row per size in `csv`. bwsim simulates the GEMM at the config clock,
// lets the controller find the steady clock, simulates again at that clock (the L2 and HBM rates
// are in GB/s, so worth more cycles at a lower clock) and takes the controller's steady state
// again. Returns the clock and time errors by size.
struct SustainedError {
  std::uint32_t size;
  double clock, time;
};
std::vector<SustainedError> sustained_errors(const HardwareConfig& base, const std::string& csv) {
  std::vector<SustainedError> errors;
  for (const auto& row : read_csv_rows(csv, 17)) {
    const std::uint32_t size = static_cast<std::uint32_t>(std::stoul(row[1]));
    const double measured_ghz = std::stod(row[11]) / 1000, measured_us = std::stod(row[10]);
    HardwareConfig cfg = base;
    SimOptions options{.mode = Mode::Timing, .check_races = false};
    const GemmSm90Params params{.m = size, .n = size, .k = size};
    SustainedRun s = sustain(energy_of(run_gemm_sm90(cfg, options, params, false).run, cfg), cfg.power, 10.0);
    cfg.clock_ghz = s.clock_ghz;
    s = sustain(energy_of(run_gemm_sm90(cfg, options, params, false).run, cfg), cfg.power, 10.0);
    errors.push_back({size, s.clock_ghz / measured_ghz - 1, s.kernel_seconds * 1e6 / measured_us - 1});
    std::printf("%s sustained %u^3: clock %.3f GHz (measured %.3f, %+.1f%%), %.1f us per GEMM (measured %.1f, %+.1f%%), "
                "%.0f W\n",
                base.name.c_str(), size, s.clock_ghz, measured_ghz, 100 * errors.back().clock, s.kernel_seconds * 1e6,
                measured_us, 100 * errors.back().time, s.power_w);
  }
  return errors;
}

TEST(PowerModelTest, TheSustainedH100GemmsClockAndTimeMatchSilicon) {
  const auto errors = sustained_errors(h100(), BWSIM_SOURCE_DIR "/tools/calibration/h100_gemm_sustained.csv");
  ASSERT_EQ(errors.size(), 3u);
  for (const SustainedError& e : errors) {
    // Predicted: clock -4.0% / -1.9% / +1.6%, time +2.7% / +0.6% / +15.9% since a far read with the
    // 256B L2 promotion sends dies.promotion_request_share of its bytes back across the partitions'
    // link; clock +3.7%, time +19.2% since a far L2 half's hits pay dies.far_hit_latency (the
    // 16384^3 draw moved again; nothing else did). Before: clock -4.0%
    // / -1.9% / +2.6%, time +2.7% / +0.6% / +17.4% since gemm_sm90 charges its
    // loops' own code per k-block (GemmSm90Params::producer_path_cycles, consumer_path_cycles; +21.8%
    // with the producer's alone): at 16384^3 the model then reads more from HBM than the 34.8 GB it
    // read before (silicon 34.5): how far the CTAs that read one A tile drift apart decides A's reuse
    // there, and the loops' cycles move that draw (README, "The k-block loops' own code"). Before: clock -4.0% / -1.9% / +0.5%, time +2.7% / +0.5% / +12.7% since buffers of a page or
    // more start on a page as cudaMalloc's do (GlobalMemory, h200_alloc_alignment.csv: at 16384^3 the
    // model reads 35.0 GB from HBM, silicon 34.5); +23.3% with GMEM's pages scattering over the L2's
    // sets but buffers packed 256 bytes apart (37.2 GB), +20.7% with XOR-folded sets (35.9 GB).
    // 16384^3 was -6.9% (clock)
    // while the HBM was a FIFO link: silicon reads as many DRAM bytes as the model did
    // (h100_gemm_traffic.csv, 34.5 / 34.4 GB) but moves them at 2.75 TB/s, and without the load
    // term (hbm.loaded) the model moved them at 3.15: 9% too few cycles, so too much power per
    // second. Silicon holds 639 W there with the SW power cap flagged, which stays unexplained.
    // Its time was +7.4% until l2.cpc_load_bytes_in_flight: an SM of a full CPC may then hold 72
    // KiB of loads in flight, 1.5 of the cooperative GEMM's 48 KiB stages, its CTAs drift apart and
    // the model reads 39.5 GB from HBM where silicon reads 34.5 (README, "the CPC load gate").
    EXPECT_LT(std::abs(e.clock), 0.05) << e.size;
    EXPECT_LT(std::abs(e.time), e.size == 16384 ? 0.20 : 0.10) << e.size;
  }
}

TEST(PowerModelTest, TheSustainedH200GemmsWithTheH100EnergiesNotRefitted) {
  const HardwareConfig h200 = load_config(BWSIM_SOURCE_DIR "/sim_configs/h200.yaml");
  const auto errors = sustained_errors(h200, BWSIM_SOURCE_DIR "/tools/calibration/h200_gemm_sustained.csv");
  ASSERT_EQ(errors.size(), 3u);
  // Predicted: clock -7.5% / -1.3% / -6.6%, time +5.1% / -0.7% / +6.4% (2026-11-30, twenty-eighth
  // session; +4.9% / -0.8% / +6.3% in the twenty-fourth; -8.4% / -2.3% / -6.6% and +3.9% / -0.5% / +6.0% at an earlier state, which the
  // figures below are of). The H100's energies are
  // above the H200's own unit rows (fma 7%, wgmma 17% at the H200's 1800 MHz tensor clock, HBM
  // 65.3 against its 39.3 pJ per byte), so the predicted power is high and the clock low. 4096^3
  // went from -6.5% to -8.4% when the L2 became two partitions: it now reads 174 MB per GEMM from
  // HBM (silicon 169 MB, h100_gemm_traffic.csv) instead of 98, at the H100's energy per byte
  // (+26 pJ per byte over the H200's = +24 W). 16384^3 also holds the board under 700 W (672 W).
  // Time stays within 10%.
  for (const SustainedError& e : errors) {
    EXPECT_LT(std::abs(e.clock), e.size == 4096 ? 0.09 : 0.07) << e.size;
    EXPECT_LT(std::abs(e.time), 0.10) << e.size;
  }
}

}  // namespace
}  // namespace bwsim
