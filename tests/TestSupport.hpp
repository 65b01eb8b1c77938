#pragma once
// Shared helpers: the hand-arithmetic config and a one-CTA launcher for small programs.
#include <string>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim::test {

inline const HardwareConfig& unit_config() {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml");
  return cfg;
}

inline const HardwareConfig& b200_config() {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/b200.yaml");
  return cfg;
}

// Runs `program` on one CTA of `threads` threads with `smem` bytes of dynamic SMEM.
inline RunResult run_cta(const WarpProgram& program, std::uint32_t threads = 32, std::uint32_t smem = 4096,
                         Mode mode = Mode::Functional) {
  Simulator sim(unit_config(), SimOptions{.mode = mode});
  return sim.launch("test", LaunchConfig{.grid_ctas = 1, .block_threads = threads, .dynamic_smem_bytes = smem},
                    program);
}

}  // namespace bwsim::test
