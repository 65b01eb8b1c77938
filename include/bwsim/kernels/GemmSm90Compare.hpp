#pragma once
// Whole-kernel validation: gemm_sm90 against its CUDA twin's measurements on silicon
// (tools/calibration/h100_gemm_sm90.csv, written by run_gemm_sm90.sh). Each row is simulated
// with the clock the twin measured during that launch (the config's rates in bytes per second
// become bytes per cycle at that clock), one warm-up launch first (as the twin warms the L2), and
// compared in cycles from the first CTA's start to the last CTA's end.
#include <cstdint>
#include <string>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Stats.hpp"

namespace bwsim {

struct KernelComparison {
  std::string shape;      // "8192x8192x8192"
  std::string variant;    // "cooperative 64x256, 4 stages, grid 132, raster m, swizzle 1"
  double clock_mhz = 0;   // measured during the launch
  std::int64_t measured = 0, predicted = 0;  // cycles
  // A row the tolerances give several draws (a chaotic one) predicts the upper median of that many
  // launches after the warm-up (GemmSm90Params::draws); low / high are the draws' extremes (with
  // one draw, the prediction).
  std::uint32_t draws = 1;
  std::int64_t predicted_low = 0, predicted_high = 0;
  double error = 0;       // (predicted - measured) / measured
  double tolerance = 0.10;
  std::string reason;     // why the tolerance is wider than the 10% target, if it is
  // What bounds the prediction: the busy fractions of the critical-path line (tensor pipe, links).
  std::vector<StatSample> busy;
  bool within() const { return error <= tolerance && -error <= tolerance; }
};

// True if the CSV's header is the GEMM twin's (m,n,k,schedule,...).
bool is_gemm_sm90_csv(const std::string& path);
// `tolerances_csv` (shape,variant,tolerance,draws,reason; a row applies to a measured row of that
// shape whose variant text, commas removed, starts with `variant`) widens the 10% target for the rows
// the model does not reach yet, or asks for several draws of a chaotic row, each with its reason.
std::vector<KernelComparison> compare_gemm_sm90_with_hardware(const HardwareConfig& config,
                                                              const std::string& measured_csv,
                                                              const std::string& tolerances_csv = {});
// Mean of |error| over the rows.
double mean_absolute_error(const std::vector<KernelComparison>& rows);

}  // namespace bwsim
