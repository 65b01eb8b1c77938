#include "bwsim/power/PowerModel.hpp"

#include <algorithm>
#include <cmath>

#include "bwsim/kernel/Simulator.hpp"
#include "bwsim/power/ClockController.hpp"

namespace bwsim {

KernelEnergy energy_of(const RunResult& run, const HardwareConfig& c) {
  const HardwareConfig::Power& p = c.power;
  KernelEnergy a;
  a.cycles = run.cycles;
  if (!run.cycles) return a;
  const double f8 = run.wgmma.f8_flops + run.mma.f8_flops;
  const double f16 = run.wgmma.flops + run.mma.flops - f8;
  a.tensor = f8 + f16 > 0;
  // A warp instruction on a pipe of L lanes per SM (L / 4 per sub-partition) occupies it for
  // 32 / (L / 4) cycles: busy cycles x L / 128 instructions.
  auto instructions = [&](CorePipe pipe, std::uint32_t lanes) {
    return static_cast<double>(run.pipes.busy_cycles(pipe)) * lanes / 128.0;
  };
  const double sm_pj = f16 * p.tensor_f16_flop_pj + f8 * p.tensor_f8_flop_pj +
                       instructions(CorePipe::Fma, c.pipes.fma_lanes) * p.fma_instruction_pj +
                       instructions(CorePipe::Alu, c.pipes.alu_lanes) * p.alu_instruction_pj +
                       instructions(CorePipe::Mufu, c.pipes.mufu_lanes) * p.mufu_instruction_pj +
                       instructions(CorePipe::Cvt, c.pipes.cvt_lanes) * p.cvt_instruction_pj;
  const MemoryStats& m = run.memory;
  const double memory_pj = static_cast<double>(m.l2_read_bytes + m.l2_write_bytes) * p.l2_byte_pj +
                           static_cast<double>(m.hbm_read_bytes + m.hbm_write_bytes) * p.hbm_byte_pj +
                           static_cast<double>(run.tma.loads + run.tma.stores + run.tma.prefetches) * p.tma_op_pj;
  a.sm_pj_per_cycle = sm_pj / static_cast<double>(run.cycles);
  a.memory_pj_per_cycle = memory_pj / static_cast<double>(run.cycles);
  return a;
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
