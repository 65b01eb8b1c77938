#include "bwsim/power/PowerModel.hpp"

#include <algorithm>
#include <cmath>

#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/power/ClockController.hpp"

namespace bwsim {

namespace {

struct EnergyPj {
  double sm = 0, memory = 0, tensor_flops = 0;
};

// The SM's and the memory side's energy (pJ) of everything `c` counted.
EnergyPj energy_pj(const CounterSnapshot& c, const HardwareConfig& cfg) {
  const HardwareConfig::Power& p = cfg.power;
  // 8-bit integer operations cost what 8-bit float ones do; a kind::mxf4* FLOP half of that (E: the
  // pipe's energy per cycle of the same shape, at twice the FP8 rate).
  const double f8 = c.wgmma.f8_flops + c.mma.f8_flops + c.mma.int_ops;
  const double f4 = c.mma.f4_flops;
  const double f16 = c.wgmma.flops + c.mma.flops - f8 - f4;
  // A warp instruction on a pipe of L lanes per SM (L / 4 per sub-partition) occupies it for
  // 32 / (L / 4) cycles: busy cycles x L / 128 instructions.
  auto instructions = [&](CorePipe pipe, std::uint32_t lanes) {
    return static_cast<double>(c.pipes.busy_cycles(pipe)) * lanes / 128.0;
  };
  EnergyPj e;
  e.tensor_flops = f4 + f8 + f16;
  e.sm = f16 * p.tensor_f16_flop_pj + f8 * p.tensor_f8_flop_pj + f4 * p.tensor_f8_flop_pj / 2 +
         instructions(CorePipe::Fma, cfg.pipes.fma_lanes) * p.fma_instruction_pj +
         instructions(CorePipe::Alu, cfg.pipes.alu_lanes) * p.alu_instruction_pj +
         instructions(CorePipe::Mufu, cfg.pipes.mufu_lanes) * p.mufu_instruction_pj +
         instructions(CorePipe::Cvt, cfg.pipes.cvt_lanes) * p.cvt_instruction_pj +
         static_cast<double>(c.pipes.smem_bytes) * p.smem_byte_pj;
  const MemoryStats& m = c.memory;
  // A reduction moves reduce_link_cost array bytes per byte it adds (the line read and written).
  e.memory = (static_cast<double>(m.l2_read_bytes + m.l2_write_bytes) +
              static_cast<double>(m.l2_reduce_bytes) * cfg.l2.reduce_link_cost) * p.l2_byte_pj +
             static_cast<double>(m.hbm_read_bytes + m.hbm_write_bytes) * p.hbm_byte_pj +
             static_cast<double>(c.tma.loads + c.tma.stores + c.tma.reduces + c.tma.prefetches) * p.tma_op_pj;
  return e;
}

}  // namespace

KernelEnergy energy_between(const CounterSnapshot& from, const CounterSnapshot& to, const HardwareConfig& config) {
  KernelEnergy a;
  a.cycles = to.cycle - from.cycle;
  if (!a.cycles) return a;
  const EnergyPj e0 = energy_pj(from, config), e1 = energy_pj(to, config);
  a.tensor = e1.tensor_flops > e0.tensor_flops;
  a.sm_pj_per_cycle = (e1.sm - e0.sm) / static_cast<double>(a.cycles);
  a.memory_pj_per_cycle = (e1.memory - e0.memory) / static_cast<double>(a.cycles);
  return a;
}

KernelEnergy energy_of(const RunResult& run, const HardwareConfig& c) {
  return energy_between(CounterSnapshot{}, run.counters(), c);
}

std::vector<WindowPower> window_power(const RunResult& run, const HardwareConfig& config, double ghz) {
  std::vector<WindowPower> w;
  const PowerModel model(config.power);
  for (std::size_t k = 1; k < run.snapshots.size(); ++k) {
    const CounterSnapshot &a = run.snapshots[k - 1], &b = run.snapshots[k];
    if (b.cycle > a.cycle) w.push_back({a.cycle, b.cycle, model.power_w(energy_between(a, b, config), ghz)});
  }
  return w;
}

double PowerModel::energy_scale(double ghz) const {
  const auto& s = p_.energy_scale;
  if (s.size() == 1) return s[0].second;
  // The segment [s[i+1], s[i]] holding ghz; beyond either end, the end segment extended.
  std::size_t i = 0;
  while (i + 2 < s.size() && ghz < s[i + 1].first) ++i;
  const auto [x0, y0] = s[i];
  const auto [x1, y1] = s[i + 1];
  return y0 + (ghz - x0) * (y1 - y0) / (x1 - x0);
}

// pJ per cycle x 1e9 cycles per second per GHz = 1e-3 W.
double PowerModel::power_w(const KernelEnergy& a, double ghz) const {
  return p_.idle_w + (a.sm_pj_per_cycle * energy_scale(ghz) + a.memory_pj_per_cycle) * ghz * 1e-3;
}

SustainedRun sustain(const KernelEnergy& a, const HardwareConfig::Power& p, double seconds) {
  const PowerModel model(p);
  SustainedRun r;
  r.seconds = seconds;
  const std::unique_ptr<ClockController> controller = clock_controllers().at(p.clock_controller).make(p);
  const double top = model.start_clock_ghz(a), period = p.period_ms * 1e-3;
  double ghz = top;
  double steady_time = 0, steady_kernels = 0, steady_clock = 0, steady_energy = 0;
  const auto periods = static_cast<std::uint64_t>(std::ceil(seconds / period - 1e-9));
  for (std::uint64_t i = 0; i < periods; ++i) {
    const double t = static_cast<double>(i) * period, dt = std::min(period, seconds - t);
    const double watts = model.power_w(a, ghz);
    const double kernels = a.cycles ? dt * ghz * 1e9 / static_cast<double>(a.cycles) : 0.0;
    r.trace.push_back({t, ghz, watts});
    r.kernels += kernels;
    r.peak_power_w = std::max(r.peak_power_w, watts);
    (ghz >= top - 1e-9 ? r.seconds_at_start_clock : r.seconds_limited) += dt;
    if (t >= seconds / 2) {
      steady_time += dt;
      steady_kernels += kernels;
      steady_clock += ghz * dt;
      steady_energy += watts * dt;
    }
    ghz = controller->next_clock_ghz(ghz, watts, top, a, model);
  }
  if (steady_time > 0) {
    r.clock_ghz = steady_clock / steady_time;
    r.power_w = steady_energy / steady_time;
    r.kernel_seconds = steady_kernels > 0 ? steady_time / steady_kernels : 0.0;
  }
  return r;
}

}  // namespace bwsim
