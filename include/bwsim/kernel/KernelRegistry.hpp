#pragma once
// The kernels the command line can run: their names, parameters and host-side runners
// (allocate tensors, build tensor maps, launch, check against a CPU reference).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {

struct KernelParam {
  std::string name;           // the CLI flag without dashes, e.g. "rows"
  std::string help;
  std::string default_value;  // as typed on the command line
  bool flag = false;          // 0 or 1, and the flag given alone means 1 (--causal)
};

// `text` as an integer in lo..hi; an InputError naming `what` (e.g. "--seqlen") otherwise.
std::uint64_t parse_integer(const std::string& text, const std::string& what, std::uint64_t lo, std::uint64_t hi);

// Parameter values by name, parsed with range checks that raise InputError naming the flag.
class KernelArgs {
 public:
  void set(const std::string& name, std::string value) { values_[name] = std::move(value); }
  const std::string& text(const std::string& name) const;
  std::uint64_t integer(const std::string& name, std::uint64_t lo, std::uint64_t hi) const;
  double real(const std::string& name, double lo, double hi) const;
  // A flag parameter: "1" or empty (the flag given alone) is true, "0" false.
  bool flag(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
};

struct KernelRequest {
  const HardwareConfig& config;
  SimOptions options;
  KernelArgs args;
  bool check = false;  // compare against the CPU reference (functional mode only)
};

struct KernelReport {
  std::string kernel;
  std::string problem;    // one line, e.g. "2048x2048 u8, box 64x64, 4 stages"
  RunResult run;
  nlohmann::json figures = nlohmann::json::object();  // kernel-specific results
  bool checked = false;
  bool check_passed = false;
  std::string check_detail;
};

struct KernelInfo {
  std::string name;
  std::string summary;
  std::vector<KernelParam> params;
  KernelReport (*run)(const KernelRequest&);
};

// The built-in kernels, then those added with register_kernel in the order added.
const std::vector<KernelInfo>& kernel_registry();
const KernelInfo* find_kernel(const std::string& name);
// Adds a kernel of the user's program to the registry (before cli_main parses the command line);
// an InputError if its name is taken or it has no runner.
void register_kernel(KernelInfo kernel);

}  // namespace bwsim
