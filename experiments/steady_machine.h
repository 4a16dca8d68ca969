// Measuring a schedule on a machine that held still. The CPU testbed is a
// virtual machine whose cores slow down and speed up by ~30 % for seconds
// at a time (a busy SMT sibling on the host). A prediction is made for the
// machine as calibration found it, so two things must hold for the
// comparison to say something about the model rather than the host:
// - calibration found one machine: each compute shape's times over its
//   rounds agree (Device.compute_spread, the robust spread calibrate
//   writes: 2-4 % on a quiet core, 10-30 % when the core changed speed
//   under it, and then the medians belong to neither speed);
// - the run met the machine calibration found: the speed probe timed
//   between the run's steps (runtime/speed_probe.h) shows each core at its
//   calibrated speed.
// So the cycle is repeated (the caller calibrates again each time) until
// both held within set limits, or the attempts run out, when the run that
// missed them least is kept; the report says how many it took and how far
// each was off. The decisions read only the calibration's spread and the
// probe, never the prediction's error, so they cannot pick a favourable
// comparison.
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
  // The largest compute_spread of any device of the schedule's calibrated
  // cluster accepted (a fraction); 0 accepts any calibration.
  double max_calibration_spread = 0;
};

// The largest |drift - 1| over `result`'s devices with a drift (0 when none
// has one: a GPU run, an uncalibrated cluster).
double LargestSpeedDrift(const CycleResult& result);

// The largest Device.compute_spread over the cluster devices that
// `result`'s schedule runs on (0 when none has one: GPUs, a cluster
// calibrated before calibrate wrote it); a core the schedule leaves idle
// does not count.
double LargestCalibrationSpread(const CycleResult& result);

// Runs `attempt` (1, 2, ...: one calibrate -> predict -> measure of the
// caller's making, each into files of its own) until its LargestSpeedDrift
// is at most policy.max_speed_drift and its LargestCalibrationSpread at most
// policy.max_calibration_spread (a limit of 0 is not checked), or
// policy.max_attempts attempts have run. Returns the steady attempt's
// result, or when none was, the one that exceeded its limits least (by the
// larger of its drift and its spread, each over its limit; the earliest of
// equals), with `attempts` (the runs made), `attempt_drifts` and
// `attempt_spreads` (each one's largest drift and spread, in order) filled
// in.
//
// Errors: InvalidArgument for max_attempts < 1 or a negative or non-finite
// limit; an attempt's error, at once (no further attempt).
absl::StatusOr<CycleResult> MeasureOnSteadyMachine(
    const SteadyMachine& policy, const std::function<absl::StatusOr<CycleResult>(int)>& attempt);

// Each run's largest drift and calibration spread, in percent and in order,
// as the tools print them: "5%/26% 1%/3%".
std::string AttemptsSummary(const CycleResult& result);

// Where attempt `n` of the cycle labelled `label` keeps its files, as a
// CycleCase label (a path under the output directory): `label` for the
// first, "LABEL/attemptN" after it.
std::string AttemptLabel(const std::string& label, int n);

}  // namespace zosched
