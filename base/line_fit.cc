#include "base/line_fit.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "base/median.h"

namespace zosched {

absl::StatusOr<Line> RobustLineFit(const std::vector<std::pair<double, double>>& points) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i].first) || !std::isfinite(points[i].second)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "line fit: point %d is (%g, %g); coordinates must be finite", i, points[i].first,
          points[i].second));
    }
  }
  std::vector<double> slopes;
  for (size_t i = 0; i < points.size(); ++i) {
    for (size_t j = i + 1; j < points.size(); ++j) {
      const double dx = points[j].first - points[i].first;
      if (dx != 0) slopes.push_back((points[j].second - points[i].second) / dx);
    }
  }
  if (slopes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "line fit: %d points without two different x values; a slope needs at least two",
        points.size()));
  }
  Line line;
  line.slope = Median(slopes);
  std::vector<double> intercepts;
  for (const auto& [x, y] : points) intercepts.push_back(y - line.slope * x);
  line.intercept = Median(intercepts);
  return line;
}

}  // namespace zosched
