// Measuring a schedule on a machine that held still. The CPU testbed is a
// virtual machine whose cores slow down and speed up by ~30 % for seconds
// at a time (a busy SMT sibling on the host). A prediction is made for the
// machine as calibration found it; when the speed probe timed between the
// run's steps (runtime/speed_probe.h) shows a core running at another speed,
// the run measured a different machine, and the comparison says more about
// the host than about the model. So the cycle is repeated (the caller
// calibrates again each time) until the cores ran within a set drift of
// calibration, or the attempts run out, when the run that drifted least
// is kept; the report says how many it took and how far each drifted. The
// decisions read only the probe, never the prediction's error, so they
// cannot pick a favourable comparison.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/testbed_cycle.h"

namespace zosched {

struct SteadyMachine {
  // The largest |drift - 1| of any device's core accepted (a fraction:
  // 0.05 is 5 %); 0 accepts any run.
  double max_speed_drift = 0;
  int max_attempts = 1;  // >= 1: runs of the cycle at most
};

// The largest |drift - 1| over `result`'s devices with a drift (0 when none
// has one: a GPU run, an uncalibrated cluster).
double LargestSpeedDrift(const CycleResult& result);

// Runs `attempt` (1, 2, ...: one calibrate -> predict -> measure of the
// caller's making, each into files of its own) until its LargestSpeedDrift
// is at most policy.max_speed_drift or policy.max_attempts attempts have
// run. Returns the steady attempt's result, or when none was, the one with
// the least drift (the earliest of equals), with `attempts` (the runs made)
// and `attempt_drifts` (each one's largest drift, in order) filled in.
//
// Errors: InvalidArgument for max_attempts < 1 or a negative or non-finite
// max_speed_drift; an attempt's error, at once (no further attempt).
absl::StatusOr<CycleResult> MeasureOnSteadyMachine(
    const SteadyMachine& policy, const std::function<absl::StatusOr<CycleResult>(int)>& attempt);

// Where attempt `n` of the cycle labelled `label` keeps its files, as a
// CycleCase label (a path under the output directory): `label` for the
// first, "LABEL/attemptN" after it.
std::string AttemptLabel(const std::string& label, int n);

}  // namespace zosched
