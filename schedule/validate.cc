#include "schedule/validate.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/model_spec.h"
#include "schedule/cluster_validate.h"
#include "schedule/first_order_model.h"
#include "schedule/training_settings.h"
#include "schedule/validate_ops.h"
#include "schedule/validate_structure.h"

namespace zosched {

absl::Status ValidateSchedule(const Schedule& schedule) {
  const std::string source = absl::StrCat("schedule '", schedule.name(), "'");
  RETURN_IF_ERROR(ValidateCluster(schedule.cluster(), source));
  RETURN_IF_ERROR(ValidateModelSpec(schedule.model(), source));
  // Informative, but printed by the tools; proto3 enums are open, so a file
  // may hold any number here.
  if (!StrategyKind_IsValid(schedule.strategy().kind())) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": strategy.kind is ", schedule.strategy().kind(),
        ", not a StrategyKind (MEZO, ZO2, DISTZO2, SINGLE_DEVICE, DDP, ZERO_1, ZERO_2 or ZERO_3)"));
  }
  if (!PrecisionRecipe_IsValid(schedule.strategy().precision())) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": strategy.precision is ", schedule.strategy().precision(),
        ", not a PrecisionRecipe (unset for ZO strategies; AMP_FP32_MASTER or BF16_FP32_GRADS for "
        "first-order ones)"));
  }
  if (!ComputeProfile_IsValid(schedule.compute_profile())) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": compute_profile is ", schedule.compute_profile(),
        ", not a ComputeProfile (ROOFLINE, ZOSCHED_CUDA, PYTORCH_MEZO, PYTORCH_ZO2, "
        "PYTORCH_FIRST_ORDER or MEGATRON_FIRST_ORDER)"));
  }
  // Megatron-LM trains first-order, in its BF16 recipe only
  // (kernel_plans/megatron_plan.h).
  if (schedule.compute_profile() == MEGATRON_FIRST_ORDER) {
    const Strategy& strategy = schedule.strategy();
    const StrategyKind kind = strategy.kind();
    if (!IsFirstOrder(kind)) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": compute_profile MEGATRON_FIRST_ORDER (Megatron-LM's GPT training) costs "
                  "first-order schedules (SINGLE_DEVICE, DDP, ZERO_1/2/3), not ",
          StrategyKind_Name(kind),
          "; a ZO schedule takes ROOFLINE, ZOSCHED_CUDA, PYTORCH_MEZO or PYTORCH_ZO2"));
    }
    if (strategy.precision() != BF16_FP32_GRADS) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": compute_profile MEGATRON_FIRST_ORDER (Megatron-LM's GPT training) costs "
                  "precision BF16_FP32_GRADS (its --bf16 recipe), not ",
          PrecisionRecipe_Name(strategy.precision()),
          "; PyTorch AMP's AMP_FP32_MASTER takes PYTORCH_FIRST_ORDER or ROOFLINE"));
    }
  }
  if (absl::Status s = ValidateTrainingSettings(schedule.model(), schedule.training()); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  RETURN_IF_ERROR(ValidateScheduleStructure(schedule));
  return ValidateOpSemantics(schedule);
}

}  // namespace zosched
