// What the --peft, --lora_rank, --lora_alpha and --lora_targets flags of
// the tools (lower, train, calibrate) mean: one parser, so that a schedule
// lowered with them and a calibration asked for them agree.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.pb.h"

namespace zosched {

// The Peft of `kind` ("none" or "lora"), with, for "lora", the adapters'
// rank (1 to kMaxLoraRank), α (finite, > 0) and targets (from query, key,
// value, output, gate, up, down; at least one). For "none" the LoRA values
// are not read. Whether the targets exist in a model is ValidatePeft's
// (models/adapters.h) to check.
// Errors: InvalidArgument naming the flag, its value and what is valid
// ("--peft=lora2: expected none or lora").
absl::StatusOr<Peft> ParsePeft(const std::string& kind, int rank, double alpha,
                               const std::vector<std::string>& targets);

// "query,value": the targets of `peft` as --lora_targets takes them ("" without
// LoRA).
std::string LoraTargetList(const Peft& peft);

}  // namespace zosched
