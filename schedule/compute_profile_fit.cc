#include "schedule/compute_profile_fit.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "schedule/first_order_model.h"

namespace zosched {
namespace {

bool IsZo(StrategyKind kind) { return kind == MEZO || kind == ZO2 || kind == DISTZO2; }

// Why a first-order profile that trains `what` (its `recipe`) on OPT and
// GPT-2 models, with or without recomputation, cannot cost `config`, or "".
// `family`: the refusal of another family.
std::string WhyNotFirstOrder(const ProfiledConfig& config, PrecisionRecipe recipe,
                             const std::string& what, const std::string& family) {
  if (!IsFirstOrder(config.strategy)) {
    return "runs the first-order strategies (SINGLE_DEVICE, DDP, ZERO_1/2/3), not " +
           StrategyKind_Name(config.strategy);
  }
  if (config.precision != recipe) {
    return absl::StrFormat("trains %s (precision %s), not %s", what, PrecisionRecipe_Name(recipe),
                           PrecisionRecipe_Name(config.precision));
  }
  return config.family == OPT || config.family == GPT2 ? "" : family;
}

// Why `profile` cannot cost `config` ("runs ..., not ..."), or "" when it
// can.
std::string WhyNot(ComputeProfile profile, const ProfiledConfig& config) {
  const std::string strategy = StrategyKind_Name(config.strategy);
  const bool gpt_block = config.family == OPT || config.family == GPT2;
  const std::string family = "runs OPT and GPT-2 models, not " + Family_Name(config.family);
  switch (profile) {
    case ROOFLINE:
      return "";
    case ZOSCHED_CUDA:
      return IsZo(config.strategy) ? ""
                                   : "runs the ZO strategies (MEZO, ZO2, DISTZO2), not " + strategy;
    case PYTORCH_MEZO:
    case PYTORCH_ZO2:
      if (config.strategy != MEZO && config.strategy != ZO2) {
        return "runs MEZO and ZO2 on one GPU, not " + strategy;
      }
      return gpt_block ? "" : family;
    case PYTORCH_FIRST_ORDER:
      return WhyNotFirstOrder(config, AMP_FP32_MASTER, "FP32 parameters", family);
    case MEGATRON_FIRST_ORDER:
      return WhyNotFirstOrder(config, BF16_FP32_GRADS, "BF16 parameters with FP32 gradients",
                              family);
    default:
      return "is not a compute profile";
  }
}

// The implementation each kernel profile stands for, in error messages.
const char* Implementation(ComputeProfile profile) {
  switch (profile) {
    case ZOSCHED_CUDA:
      return "zosched's CUDA backend";
    case PYTORCH_MEZO:
    case PYTORCH_ZO2:
      return "ZO2's PyTorch code";
    case PYTORCH_FIRST_ORDER:
      return "PyTorch eager training";
    case MEGATRON_FIRST_ORDER:
      return "Megatron-LM's GPT training";
    default:
      return "every op at its roofline";
  }
}

}  // namespace

ComputeProfile KernelProfileFor(const ProfiledConfig& config) {
  if (IsZo(config.strategy)) return ZOSCHED_CUDA;
  for (const ComputeProfile p : {PYTORCH_FIRST_ORDER, MEGATRON_FIRST_ORDER}) {
    if (WhyNot(p, config).empty()) return p;
  }
  return ROOFLINE;
}

absl::Status CheckProfileRuns(ComputeProfile profile, const ProfiledConfig& config) {
  const std::string why = WhyNot(profile, config);
  if (why.empty()) return absl::OkStatus();
  std::vector<std::string> running;
  for (const ComputeProfile p :
       {ZOSCHED_CUDA, PYTORCH_MEZO, PYTORCH_ZO2, PYTORCH_FIRST_ORDER, MEGATRON_FIRST_ORDER,
        ROOFLINE}) {
    if (WhyNot(p, config).empty()) running.push_back(ComputeProfileFlagName(p));
  }
  const std::string last = running.back();
  running.pop_back();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s (%s) %s (expected %s%s%s)", ComputeProfileFlagName(profile), Implementation(profile),
      why, absl::StrJoin(running, ", "), running.empty() ? "" : " or ", last));
}

std::string ComputeProfileFlagName(ComputeProfile profile) {
  return absl::AsciiStrToLower(ComputeProfile_Name(profile));
}

}  // namespace zosched
