// The median of a sample, as the benchmarks, calibration and the
// predicted-versus-measured comparison report it: the middle value after
// sorting, and for an even count the upper of the two middle values (a
// value that was measured, not an average of two).
#pragma once

#include <algorithm>
#include <vector>

namespace zosched {

// `values` must not be empty.
inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace zosched
