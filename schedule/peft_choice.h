// What the --peft, --lora_rank, --lora_alpha, --lora_targets and
// --prefix_tokens flags of the tools (lower, train, calibrate) mean: one
// parser, so that a schedule lowered with them and a calibration asked for
// them agree.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.pb.h"

namespace zosched {

// The flags' values, defaults as the tools' (MeZO's choices).
struct PeftFlags {
  std::string kind = "none";  // --peft: none, lora or prefix
  int lora_rank = 8;
  double lora_alpha = 16;
  std::vector<std::string> lora_targets = {"query", "value"};
  int prefix_tokens = 5;
};

// The Peft of `flags`: for "lora", the adapters' rank (1 to kMaxLoraRank),
// α (finite, > 0) and targets (from query, key, value, output, gate, up,
// down; at least one); for "prefix", its virtual tokens (1 to
// kMaxPrefixTokens); for "none", nothing. Values of another kind are not
// read. Whether the targets exist in a model, and whether a prefix fits its
// positions, is ValidatePeft's (models/adapters.h) to check.
// Errors: InvalidArgument naming the flag, its value and what is valid
// ("--peft=lora2: expected none, lora or prefix").
absl::StatusOr<Peft> ParsePeft(const PeftFlags& flags);

// "query,value": the targets of `peft` as --lora_targets takes them ("" without
// LoRA).
std::string LoraTargetList(const Peft& peft);

// What --peft names for `peft`: "none", "lora" or "prefix".
std::string PeftFlagName(const Peft& peft);

}  // namespace zosched
