#pragma once
// The upper median: the element at size / 2 once sorted, as the calibration programs and the GEMM
// twin take the middle of their runs (for an even count, the higher of the two middle ones).
#include <algorithm>
#include <cstddef>
#include <vector>

namespace bwsim {

template <class T>
T upper_median(std::vector<T> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace bwsim
