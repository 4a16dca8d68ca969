// predict_vs_measure's targets for a step's breakdown, beside those for its
// time: where the communication falls against the compute, predicted
// against measured, over all the devices (schedule/timeline_metrics.h
// defines overlap and exposed communication per device).
#pragma once

#include <cstdint>

#include "schedule/timeline_metrics.h"

namespace zosched {

// The targets: overlap within 5 points (|predicted - measured| <= 0.05 as
// fractions), and exposed communication within 10 % of the measured or
// 0.1 ms, whichever is larger.
constexpr double kOverlapTargetPoints = 0.05;
constexpr double kExposedTargetFraction = 0.10;
constexpr int64_t kExposedTargetNs = 100000;

// A step's breakdown over its devices: the share of all their communication
// time that falls inside their own compute (Σ overlap / Σ communication; 0
// without communication), and the exposed communication per device (the
// mean, ns). Over all devices rather than one: where devices take turns on
// a core, which one goes first changes from step to step.
struct Breakdown {
  double overlap = 0;
  int64_t exposed_ns = 0;
};
Breakdown StepBreakdown(const StepMetrics& step);

struct BreakdownCheck {
  bool overlap_ok = false;
  bool exposed_ok = false;
};

// `*_overlap`: fractions in [0, 1]; `*_exposed_ns`: nanoseconds >= 0.
BreakdownCheck CheckBreakdown(double predicted_overlap, double measured_overlap,
                              int64_t predicted_exposed_ns, int64_t measured_exposed_ns);

}  // namespace zosched
