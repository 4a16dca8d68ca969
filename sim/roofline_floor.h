// A kernel-level prediction and the floor printed beside it
// (docs/ARCHITECTURE.md, 'Simulator'): a schedule's step under its
// ComputeProfile, and the same schedule's step with every compute op at its
// roofline (ComputeProfile ROOFLINE), which is what `simulate`, the studies
// and the explorer print as "the floor".
//
// The floor is the roofline's prediction, not a proven bound: a kernel plan
// costs its own kernels (its GEMMs at their dtype's rate, its bytes), which
// may differ from the op's FLOPs and bytes that the roofline costs, and
// nothing in the cost model makes each kernel-level op at least its
// roofline; on the catalog's GPUs every study and shipped sweep finds the
// kernel-level step above its floor (the study tests and explore_test check
// it). For pruning, sim/step_floor.h bounds the step under the schedule's
// own profile.
//
// Which profile costs which configuration is schedule/compute_profile_fit.h
// (roofline_floor_test checks that it agrees with the kernel plans).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline_metrics.h"
#include "sim/simulator.h"

namespace zosched {

// One simulated step and its floor.
struct StepWithFloor {
  StepMetrics metrics;   // of the step under the schedule's compute profile
  int64_t floor_ns = 0;  // the step with every compute op at its roofline
};

// Simulates one step of `*schedule` (validated) under its compute profile
// into `*result`, reusing `simulator` and `*result` as Simulator::Simulate
// does, and returns its metrics (ComputeStepMetrics, step 0) and its floor:
// the step of the same schedule with compute_profile ROOFLINE (measured
// compute tables still win, as in any simulation). When the profile is not
// ROOFLINE, the floor is simulated first, with `*schedule`'s profile set to
// ROOFLINE, which is then set back before anything else happens (also on an
// error); when it is ROOFLINE, the floor is the step itself, simulated
// once. Units: nanoseconds.
//
// Errors: Simulator::Simulate's and ComputeStepMetrics's.
absl::StatusOr<StepWithFloor> SimulateWithFloor(Schedule* schedule, Simulator& simulator,
                                                SimResult* result);

// The same for a one-off simulation: on a copy of `schedule`, with a
// Simulator of its own.
absl::StatusOr<StepWithFloor> SimulateWithFloor(const Schedule& schedule, SimResult* result);

}  // namespace zosched
