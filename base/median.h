// The median of a sample, as the benchmarks, calibration and the
// predicted-versus-measured comparison report it: the middle value after
// sorting, and for an even count the upper of the two middle values (a
// value that was measured, not an average of two); and the sample's spread
// about it.
#pragma once

#include <algorithm>
#include <vector>

namespace zosched {

// `values` must not be empty.
inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// How much `values` vary, robust to outliers, as a fraction of their median:
// 1.4826 × the median absolute deviation over the median (the factor makes
// it a normal sample's standard deviation). `values` must not be empty and
// their median must be positive.
inline double RelativeSpread(const std::vector<double>& values) {
  const double median = Median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(v > median ? v - median : median - v);
  return 1.4826 * Median(deviations) / median;
}

}  // namespace zosched
