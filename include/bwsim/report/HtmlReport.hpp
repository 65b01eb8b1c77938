#pragma once
// `--report FILE.html`: one self-contained HTML page (no scripts, no network) built from a run's
// trace and summary: the run's figures, the stall table, a timeline of SM 0's warps and units over
// a window, plots of tensor-pipe utilisation and TMA bandwidth over the whole run, and every
// statistic with its description.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bwsim/core/Cycle.hpp"
#include "bwsim/core/Stats.hpp"

namespace bwsim {

struct ReportInput {
  std::string trace_path;  // a Chrome trace-event JSON file of the run (bwsim's own)
  nlohmann::json summary;  // what ran and the kernel's figures (what --json prints besides the statistics)
  std::vector<StatSample> stats;  // the run's statistics (kernel/StatRegistry)
  std::string stall_table;
  Cycle cycles = 0;              // the run's length
  Cycle window_begin = 0;        // the timeline's window
  Cycle window_end = 0;
};

// Throws InputError if a file cannot be read or written.
void write_html_report(const std::string& html_path, const ReportInput& in);

}  // namespace bwsim
