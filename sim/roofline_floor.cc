#include "sim/roofline_floor.h"

#include "base/status_macros.h"

namespace zosched {
namespace {

// The step of `schedule` simulated into `*result`.
absl::StatusOr<StepMetrics> SimulateStep(const Schedule& schedule, Simulator& simulator,
                                         SimResult* result) {
  RETURN_IF_ERROR(simulator.Simulate(schedule, result));
  return ComputeStepMetrics(schedule, result->timeline, 0);
}

}  // namespace

absl::StatusOr<StepWithFloor> SimulateWithFloor(Schedule* schedule, Simulator& simulator,
                                                SimResult* result) {
  StepWithFloor step;
  const ComputeProfile profile = schedule->compute_profile();
  if (profile != ROOFLINE) {
    schedule->set_compute_profile(ROOFLINE);
    absl::StatusOr<StepMetrics> floor = SimulateStep(*schedule, simulator, result);
    schedule->set_compute_profile(profile);
    RETURN_IF_ERROR(floor.status());
    step.floor_ns = floor->step_ns;
  }
  ASSIGN_OR_RETURN(step.metrics, SimulateStep(*schedule, simulator, result));
  if (profile == ROOFLINE) step.floor_ns = step.metrics.step_ns;
  return step;
}

absl::StatusOr<StepWithFloor> SimulateWithFloor(const Schedule& schedule, SimResult* result) {
  Schedule copy = schedule;
  Simulator simulator;
  return SimulateWithFloor(&copy, simulator, result);
}

}  // namespace zosched
