// A straight line y = intercept + slope · x through measured points, fitted
// so that one wild point does not move it: the Theil–Sen estimator (slope:
// the median of the slopes between every two points with different x;
// intercept: the median of y − slope · x). Calibration fits fixed cost plus
// cost per byte through a handful of timed sizes, where a single size timed
// during a busy spell of a virtual machine is common: a least-squares line
// through six sizes, one of them 4× slow, put a 2-rank all-gather's fixed
// cost at 233 µs where the runs took 120 µs. With n points it tolerates
// about 29 % of them being arbitrarily wrong. The medians are base/median.h's
// (the upper middle value for an even count).
#pragma once

#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace zosched {

struct Line {
  double intercept = 0;
  double slope = 0;
};

// `points` are (x, y). Errors: InvalidArgument when fewer than two of them
// have different x (no slope to fit), or a coordinate is not finite.
absl::StatusOr<Line> RobustLineFit(const std::vector<std::pair<double, double>>& points);

}  // namespace zosched
