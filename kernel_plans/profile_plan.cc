#include "kernel_plans/profile_plan.h"

#include "absl/strings/str_format.h"
#include "kernel_plans/megatron_plan.h"
#include "kernel_plans/pytorch_first_order_plan.h"
#include "kernel_plans/pytorch_zo_plan.h"
#include "kernel_plans/zosched_cuda_plan.h"
#include "models/adapters.h"

namespace zosched {
namespace {

// zosched's host issues a kernel through cudaLaunchKernel from C++: about
// 3 µs a launch (U: ../shared/reference/hardware.md, "kernel launch ≈ 3 µs
// host").
constexpr double kZoschedDispatchS = 3e-6;

}  // namespace

absl::StatusOr<KernelPlan> ProfilePlan(ComputeProfile profile, const ModelSpec& model,
                                       const ComputeOp& op, DType compute_dtype,
                                       const Peft& peft) {
  if (TrainsAdapters(peft) && profile != ZOSCHED_CUDA) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute profile %s has no kernel plan for %s (ZO2's and MeZO's PyTorch code paths are "
        "modelled for full-parameter ZO): cost LoRA and prefix-tuning schedules with "
        "ZOSCHED_CUDA or ROOFLINE",
        ComputeProfile_Name(profile), PeftLabel(peft)));
  }
  switch (profile) {
    case ZOSCHED_CUDA:
      return ZoschedCudaPlan(model, op, compute_dtype, peft);
    case PYTORCH_MEZO:
      return PyTorchZoPlan(model, op, compute_dtype, PyTorchZoVariant::kMezoResident);
    case PYTORCH_ZO2:
      return PyTorchZoPlan(model, op, compute_dtype, PyTorchZoVariant::kZo2Offloaded);
    case PYTORCH_FIRST_ORDER:
      return PyTorchFirstOrderPlan(model, op, compute_dtype);
    case MEGATRON_FIRST_ORDER:
      return MegatronPlan(model, op, compute_dtype);
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "compute profile %s has no kernel plan (ROOFLINE costs each op as one roofline)",
          ComputeProfile_Name(profile)));
  }
}

// Megatron-LM issues its kernels from PyTorch eager too (TE's modules,
// torch.compile's fused functions and plain torch ops alike go through
// Python and the dispatcher): PyTorch's per-launch figure (U: TE's C++
// GEMM path may be a little faster a launch, a compiled function's guards
// slower).
double ProfileHostDispatchS(ComputeProfile profile) {
  return profile == PYTORCH_MEZO || profile == PYTORCH_ZO2 || profile == PYTORCH_FIRST_ORDER ||
                 profile == MEGATRON_FIRST_ORDER
             ? kPyTorchEagerDispatchS
             : kZoschedDispatchS;
}

}  // namespace zosched
