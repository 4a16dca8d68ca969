#include "experiments/breakdown_target.h"

#include <algorithm>
#include <cmath>

namespace zosched {

Breakdown StepBreakdown(const StepMetrics& step) {
  int64_t overlap_ns = 0, comm_ns = 0, exposed_ns = 0;
  for (const DeviceMetrics& d : step.devices) {
    overlap_ns += d.overlap_ns;
    comm_ns += d.comm_ns;
    exposed_ns += d.exposed_comm_ns;
  }
  Breakdown b;
  if (comm_ns > 0) b.overlap = static_cast<double>(overlap_ns) / comm_ns;
  if (!step.devices.empty()) b.exposed_ns = exposed_ns / static_cast<int64_t>(step.devices.size());
  return b;
}

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
