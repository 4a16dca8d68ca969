#include "experiments/breakdown_target.h"

#include <algorithm>
#include <cmath>

namespace zosched {

BreakdownCheck CheckBreakdown(double predicted_overlap, double measured_overlap,
                              int64_t predicted_exposed_ns, int64_t measured_exposed_ns) {
  BreakdownCheck check;
  // A hair of slack for overlaps printed as whole points.
  check.overlap_ok = std::fabs(predicted_overlap - measured_overlap) <= kOverlapTargetPoints + 1e-9;
  const double allowed_ns =
      std::max<double>(kExposedTargetNs, kExposedTargetFraction * measured_exposed_ns);
  check.exposed_ok = std::fabs(static_cast<double>(predicted_exposed_ns - measured_exposed_ns)) <=
                     allowed_ns;
  return check;
}

}  // namespace zosched
