#pragma once
// Shared helpers: the hand-arithmetic config and a one-CTA launcher for small programs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Error.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim::test {

// The text of sim_configs/`name`.yaml.
inline std::string config_text(const char* name) {
  std::ifstream in(std::string(BWSIM_SOURCE_DIR "/sim_configs/") + name + ".yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

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

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command, capturing its output and exit code.
inline Outcome run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {};
  Outcome o;
  char buf[4096];
  while (const std::size_t n = fread(buf, 1, sizeof buf, pipe)) o.output.append(buf, n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

// Runs the bwsim command line with `args`.
inline Outcome bwsim(const std::string& args) { return run_command(std::string(BWSIM_BINARY) + " " + args); }

// Runs `fn` and expects it to raise a MisuseError of `rule`; returns the error for more checks.
template <class Fn>
MisuseError expect_misuse(Fn&& fn, Rule rule) {
  try {
    fn();
  } catch (const MisuseError& e) {
    EXPECT_EQ(e.rule(), rule) << e.what();
    return e;
  }
  ADD_FAILURE() << "no misuse raised";
  return MisuseError(rule, {}, "", "");
}

// Runs the command line with `args` and expects bad-input exit code 2 with `message` in its output.
inline void expect_bad_input(const std::string& args, const std::string& message) {
  const Outcome o = bwsim(args);
  EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.output;
  EXPECT_NE(o.output.find(message), std::string::npos) << args << "\n" << o.output;
}

// Builds a Simulator on `config` and expects a ConfigError with `message` in it: the errors found
// when the model's parts are built from a config that read cleanly (an unknown model name, an
// L2 set index that cannot be built).
inline void expect_simulator_config_error(const HardwareConfig& config, const std::string& message) {
  try {
    Simulator sim(config, SimOptions{});
    ADD_FAILURE() << "no ConfigError for: " << message;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

// unit_test.yaml with 16 SMs, room for the largest cluster.
inline const HardwareConfig& unit_config_16sm() {
  static const HardwareConfig cfg = load_config(BWSIM_SOURCE_DIR "/sim_configs/unit_test.yaml", {"sm.count=16"});
  return cfg;
}

// Runs `program` on `grid` CTAs in clusters of `cluster` with `threads` threads and `smem` bytes each.
inline RunResult run_clusters(const WarpProgram& program, ClusterShape cluster, std::uint32_t grid,
                              std::uint32_t threads = 32, std::uint32_t smem = 4096, Mode mode = Mode::Functional) {
  Simulator sim(unit_config_16sm(), SimOptions{.mode = mode});
  return sim.launch("test",
                    LaunchConfig{.grid_ctas = grid,
                                 .block_threads = threads,
                                 .dynamic_smem_bytes = smem,
                                 .cluster = cluster,
                                 .non_portable_cluster = cluster.size() > 8},
                    program);
}

// A (rows x 16) and B bf16 operands K-major without swizzle, in core matrices: element (r, k) at
// (r%8)*16 + (r/8)*SBO + (k%8)*2 + (k/8)*LBO with LBO = 128, SBO = 256.
inline std::uint32_t core_offset(std::uint32_t r, std::uint32_t k) {
  return (r % 8) * 16 + (r / 8) * 256 + (k % 8) * 2 + (k / 8) * 128;
}

}  // namespace bwsim::test
