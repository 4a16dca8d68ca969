#include "schedule/peft_choice.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "base/flag_checks.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "models/adapters.h"

namespace zosched {
namespace {

// "query" for LORA_QUERY.
std::string TargetFlagName(LoraTarget target) {
  return absl::AsciiStrToLower(LoraTarget_Name(target).substr(sizeof("LORA_") - 1));
}

}  // namespace

absl::StatusOr<Peft> ParsePeft(const std::string& kind, int rank, double alpha,
                               const std::vector<std::string>& targets) {
  Peft peft;
  if (kind == "none") return peft;
  if (kind != "lora") return InvalidArgument("--peft=%s: expected none or lora", kind);
  peft.set_kind(LORA);
  RETURN_IF_ERROR(CheckFlagRange("lora_rank", rank, 1, kMaxLoraRank, "the adapters' rank"));
  RETURN_IF_ERROR(CheckFlagFinite("lora_alpha", alpha, true, "α (MeZO: 16)"));
  peft.set_lora_rank(rank);
  peft.set_lora_alpha(alpha);
  if (targets.empty()) {
    return InvalidArgument(
        "--lora_targets is empty: name at least one of query, key, value, output, gate, up, "
        "down");
  }
  for (const std::string& name : targets) {
    LoraTarget target;
    if (!LoraTarget_Parse("LORA_" + absl::AsciiStrToUpper(name), &target) ||
        target == LORA_TARGET_UNSPECIFIED) {
      return InvalidArgument(
          "--lora_targets names '%s': expected query, key, value, output, gate, up or down",
          name);
    }
    peft.add_lora_targets(target);
  }
  return peft;
}

std::string LoraTargetList(const Peft& peft) {
  if (!TrainsAdapters(peft)) return "";
  std::vector<std::string> names;
  for (LoraTarget t : LoraTargetsOf(peft)) names.push_back(TargetFlagName(t));
  return absl::StrJoin(names, ",");
}

}  // namespace zosched
