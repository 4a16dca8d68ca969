// The kernel plan of a compute op under a schedule's ComputeProfile
// (schedule/schedule.proto), and how fast that implementation's host issues
// launches: the one place the simulator picks an implementation.
#pragma once

#include "absl/status/statusor.h"
#include "kernel_plans/kernel.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The kernels `profile`'s implementation launches for `op` of a schedule
// over `model` computing in `compute_dtype` and training what `peft` says.
//
// Errors: InvalidArgument for ROOFLINE (no kernels: the caller costs the
// roofline), for an op or model the implementation does not run (the
// message names which), and for LoRA or a prefix (TrainsAdapters) under
// any profile but ZOSCHED_CUDA (the message names the adapters).
absl::StatusOr<KernelPlan> ProfilePlan(ComputeProfile profile, const ModelSpec& model,
                                       const ComputeOp& op, DType compute_dtype,
                                       const Peft& peft);

// Seconds the implementation's host spends issuing one launch (CostPlan's
// host_dispatch_s).
double ProfileHostDispatchS(ComputeProfile profile);

}  // namespace zosched
