#pragma once
// bwsim fidelity: how much a kernel's predicted cycles rest on each uncertain config value. Every
// value the config's uncertainty section lists is set to its low and its high end (the value times
// 1 -+ its tag's band; integers rounded, at least 1 apart) while the others keep theirs, and the
// kernel is run again each time.
#include <string>
#include <vector>

#include "bwsim/kernel/KernelRegistry.hpp"

namespace bwsim {

struct Sensitivity {
  std::string key, tag;
  double band = 0;
  std::string value, low, high;  // as set in the config
  Cycle low_cycles = 0, high_cycles = 0;
  double low_change = 0, high_change = 0;  // relative to the base run's cycles
  double half_range() const;               // half the spread of the two changes
};

struct FidelityReport {
  Cycle base_cycles = 0;
  std::vector<Sensitivity> rows;  // largest half-range first
  // Root sum of squares of the rows' half-ranges (the values taken as independent): the relative
  // uncertainty of the cycles; and the part of its square from values tagged H100 or E.
  double uncertainty = 0;
  double borrowed_or_estimated_share = 0;
};

// Runs `kernel` with `options` and `args` on the config at `config_path` (with `overrides`), once
// as it is and twice per listed value (or per value of `only`, when given: each must be listed).
FidelityReport fidelity(const KernelInfo& kernel, const std::string& config_path,
                        const std::vector<std::string>& overrides, const SimOptions& options, const KernelArgs& args,
                        const std::vector<std::string>& only = {});

std::string fidelity_text(const FidelityReport& report);

}  // namespace bwsim
