// Which compute profile (schedule.proto's ComputeProfile) can cost which
// configuration, and which one predicts it when none is named: the one rule
// that lower (--compute_profile), the simulator's callers and the explorer
// share. It restates the kernel plans' own refusals
// (kernel_plans/profile_plan.h and the plans it picks), so that a schedule
// or a sweep is refused before it is simulated rather than failing op by
// op; sim/roofline_floor_test checks that the two agree.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

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
// DDP, ZERO_1/2/3) under AMP_FP32_MASTER, for OPT and GPT-2 models (PyTorch
// eager training; with recompute, torch.utils.checkpoint's forward again
// before each block's backward); MEGATRON_FIRST_ORDER for them under
// Megatron's BF16_FP32_GRADS recipe (Megatron-LM's fused kernels; with
// recompute, its full recomputation); ROOFLINE where no implementation is
// profiled: first-order training of other families, an unset strategy.
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

}  // namespace zosched
