// LoRA adapters (models/model.proto Peft): which projections of a block
// they adapt, their tensors, named and shaped as Hugging Face PEFT saves
// them, and their element layout in a block's ADAPTER_PART
// (schedule/schedule.proto).
//
// An adapted projection computes y = x Wᵀ + b + s · (x Aᵀ) Bᵀ with
// A [r, in], B [out, r] and s = α / r. The ADAPTER_PART of block b is, for
// each target in LoraTarget order (query, key, value, output, gate, up,
// down), A then B, each row-major, back to back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/model.pb.h"
#include "models/model_tensors.h"

namespace zosched {

// Largest LoRA rank accepted (PEFT users go to 256; past it an adapter is
// no longer small).
constexpr int kMaxLoraRank = 4096;

// One adapted projection of a block.
struct LoraAdapter {
  LoraTarget target = LORA_TARGET_UNSPECIFIED;
  TensorSlot base = TensorSlot::kUnspecified;  // the adapted weight's slot
  std::string module;  // the projection's checkpoint name without ".weight"
  int64_t in = 0;      // the projection's input width
  int64_t out = 0;     // its output width
  TensorSpec a;        // "<module>.lora_A.weight" [r, in]
  TensorSpec b;        // "<module>.lora_B.weight" [out, r]
  int64_t a_offset = 0;  // elements from the start of the ADAPTER_PART
  int64_t b_offset = 0;
};

// Whether `peft` trains adapters (LoRA) rather than every parameter.
inline bool TrainsAdapters(const Peft& peft) { return peft.kind() == LORA; }

// The targets of `peft` in LoraTarget order: lora_targets, or query and
// value when it is empty.
std::vector<LoraTarget> LoraTargetsOf(const Peft& peft);

// PEFT's name of a target for `spec`'s family ("q_proj", "fc1", ...).
std::string LoraTargetName(const ModelSpec& spec, LoraTarget target);

// Checks `peft` against `model`: for LORA, rank in [1, kMaxLoraRank], α
// finite and > 0, targets set, distinct, and present in the model (gate
// only in gated FFNs), and a family whose projections are separate
// nn.Linear weights (not GPT-2's fused, transposed c_attn). For PEFT_NONE,
// no LoRA field set.
// Errors: InvalidArgument naming the field, its value and what is valid.
absl::Status ValidatePeft(const ModelSpec& model, const Peft& peft);

// The adapters of block `layer` (ValidatePeft must pass), in layout order.
std::vector<LoraAdapter> BlockAdapters(const ModelSpec& spec, const Peft& peft, int64_t layer);

// Their tensors, A then B per adapter, in layout order.
std::vector<TensorSpec> AdapterTensors(const ModelSpec& spec, const Peft& peft, int64_t layer);

// Elements of one block's ADAPTER_PART (0 without LoRA).
int64_t AdapterParams(const ModelSpec& spec, const Peft& peft);

// s = α / r.
float LoraScaling(const Peft& peft);

}  // namespace zosched
