// A kernel-level prediction and the floor printed beside it
// (docs/ARCHITECTURE.md, 'Simulator'): which ComputeProfile predicts a
// configuration's GPU compute kernel by kernel, and the same schedule's step
// with every compute op at its roofline (ComputeProfile ROOFLINE), which is
// what `simulate`, the studies and the explorer print as "the floor".
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
// Which profile runs what restates the kernel plans' own refusals
// (kernel_plans/profile_plan.h and the plans it picks), so that a sweep is
// refused before it is evaluated rather than failing op by op;
// roofline_floor_test checks the two agree.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline_metrics.h"
#include "sim/simulator.h"

namespace zosched {

// What a compute profile is asked to cost: a configuration's strategy, its
// first-order knobs and its model's family.
struct ProfiledConfig {
  StrategyKind strategy = STRATEGY_KIND_UNSPECIFIED;
  PrecisionRecipe precision = AMP_FP32_MASTER;  // first-order strategies only
  bool recompute = false;                       // first-order strategies only
  Family family = FAMILY_UNSPECIFIED;
};

// The kernel-level profile `config` is predicted with when none is named:
// ZOSCHED_CUDA for MEZO, ZO2 and DISTZO2 (zosched's CUDA backend, every
// family); PYTORCH_FIRST_ORDER for the first-order strategies (SINGLE_DEVICE,
// DDP, ZERO_1/2/3) under AMP_FP32_MASTER without recomputation, for OPT and
// GPT-2 models (PyTorch eager training); MEGATRON_FIRST_ORDER for them under
// Megatron's BF16_FP32_GRADS recipe (Megatron-LM's fused kernels); ROOFLINE
// where no implementation is profiled: activation recomputation,
// first-order training of other families, an unset strategy.
ComputeProfile KernelProfileFor(const ProfiledConfig& config);

// OK when `profile` can cost the compute of `config`'s schedules: ROOFLINE
// every one; ZOSCHED_CUDA the ZO strategies; PYTORCH_MEZO and PYTORCH_ZO2
// MEZO and ZO2 (ZO2's PyTorch code runs one GPU) of OPT and GPT-2 models;
// PYTORCH_FIRST_ORDER and MEGATRON_FIRST_ORDER what KernelProfileFor gives
// them.
//
// Errors: InvalidArgument "PROFILE (its implementation) runs ..., not ...
// (expected P1, P2 or roofline)", naming the profiles that would run it as
// lower's --compute_profile names them.
absl::Status CheckProfileRuns(ComputeProfile profile, const ProfiledConfig& config);

// `profile` as lower's --compute_profile names it: "zosched_cuda",
// "pytorch_first_order", "roofline".
std::string ComputeProfileFlagName(ComputeProfile profile);

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
