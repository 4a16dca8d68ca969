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

absl::StatusOr<Peft> ParsePeft(const PeftFlags& flags) {
  Peft peft;
  if (flags.kind == "none") return peft;
  if (flags.kind == "prefix") {
    RETURN_IF_ERROR(CheckFlagRange("prefix_tokens", flags.prefix_tokens, 1, kMaxPrefixTokens,
                                   "the prefix's virtual tokens (MeZO: 5)"));
    peft.set_kind(PREFIX);
    peft.set_prefix_tokens(flags.prefix_tokens);
    return peft;
  }
  if (flags.kind != "lora") {
    return InvalidArgument("--peft=%s: expected none, lora or prefix", flags.kind);
  }
  peft.set_kind(LORA);
  RETURN_IF_ERROR(
      CheckFlagRange("lora_rank", flags.lora_rank, 1, kMaxLoraRank, "the adapters' rank"));
  RETURN_IF_ERROR(CheckFlagFinite("lora_alpha", flags.lora_alpha, true, "α (MeZO: 16)"));
  peft.set_lora_rank(flags.lora_rank);
  peft.set_lora_alpha(flags.lora_alpha);
  if (flags.lora_targets.empty()) {
    return InvalidArgument(
        "--lora_targets is empty: name at least one of query, key, value, output, gate, up, "
        "down");
  }
  for (const std::string& name : flags.lora_targets) {
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
  if (!TrainsLora(peft)) return "";
  std::vector<std::string> names;
  for (LoraTarget t : LoraTargetsOf(peft)) names.push_back(TargetFlagName(t));
  return absl::StrJoin(names, ",");
}

std::string PeftFlagName(const Peft& peft) {
  switch (peft.kind()) {
    case LORA: return "lora";
    case PREFIX: return "prefix";
    default: return "none";
  }
}

}  // namespace zosched
