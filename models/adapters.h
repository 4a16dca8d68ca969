// Parameter-efficient ZO (models/model.proto Peft): the per-block tensors a
// LoRA or prefix-tuning run trains, their names and shapes, and their
// element layout in a block's ADAPTER_PART (schedule/schedule.proto).
//
// LoRA: an adapted projection computes y = x Wᵀ + b + s · (x Aᵀ) Bᵀ with
// A [r, in], B [out, r] and s = α / r. The ADAPTER_PART of block b is, for
// each target in LoraTarget order (query, key, value, output, gate, up,
// down), A then B, each row-major, back to back, named as Hugging Face PEFT
// names them.
//
// Prefix tuning: block b's attention reads k virtual tokens' keys and
// values before the real tokens' (every real query sees all k), and the
// real tokens sit at positions k, k + 1, ... (PEFT's past_key_values:
// the prefix is a KV cache of k tokens). The ADAPTER_PART of block b is the
// keys [k, kv] then the values [k, kv] (kv = KvWidth), row-major, the keys
// as attention reads them (after Qwen3's k-norm and the rotary embedding at
// positions 0 .. k - 1), named "<attention module>.prefix_keys" and
// ".prefix_values" in checkpoints (PEFT saves all blocks' as one tensor:
// runtime/checkpoint/peft_adapters.h).
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

// Most virtual tokens a prefix may have (MeZO uses 5; prefix-tuning papers
// up to a few hundred).
constexpr int kMaxPrefixTokens = 4096;

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

// Whether `peft` trains per-block adapters (LoRA or a prefix) over a
// frozen base rather than every parameter.
inline bool TrainsAdapters(const Peft& peft) {
  return peft.kind() == LORA || peft.kind() == PREFIX;
}

// Whether they are LoRA adapters.
inline bool TrainsLora(const Peft& peft) { return peft.kind() == LORA; }

// The virtual tokens k of a prefix (0 without one): also how far the real
// tokens' positions are shifted.
inline int64_t PrefixTokens(const Peft& peft) {
  return peft.kind() == PREFIX ? peft.prefix_tokens() : 0;
}

// "lora r8", "prefix k5", or "" for every parameter: how schedule names
// and labels show `peft`.
std::string PeftLabel(const Peft& peft);

// The targets of `peft` in LoraTarget order: lora_targets, or query and
// value when it is empty.
std::vector<LoraTarget> LoraTargetsOf(const Peft& peft);

// PEFT's name of a target for `spec`'s family ("q_proj", "fc1", ...).
std::string LoraTargetName(const ModelSpec& spec, LoraTarget target);

// Checks `peft` against `model`: for LORA, rank in [1, kMaxLoraRank], α
// finite and > 0, targets set, distinct, and present in the model (gate
// only in gated FFNs), and a family whose projections are separate
// nn.Linear weights (not GPT-2's fused, transposed c_attn); for PREFIX,
// prefix_tokens in [1, kMaxPrefixTokens] and below the model's
// max_positions; no field of another kind set.
// Errors: InvalidArgument naming the field, its value and what is valid.
absl::Status ValidatePeft(const ModelSpec& model, const Peft& peft);

// The LoRA adapters of block `layer` (ValidatePeft must pass), in layout
// order; none for a prefix.
std::vector<LoraAdapter> BlockAdapters(const ModelSpec& spec, const Peft& peft, int64_t layer);

// The tensors of block `layer`'s ADAPTER_PART in layout order: A then B
// per LoRA adapter, or a prefix's keys [k, kv] and values [k, kv].
std::vector<TensorSpec> AdapterTensors(const ModelSpec& spec, const Peft& peft, int64_t layer);

// Elements of one block's ADAPTER_PART (0 without adapters).
int64_t AdapterParams(const ModelSpec& spec, const Peft& peft);

// The attention module of block `layer` ("model.layers.0.self_attn"):
// where a prefix's tensors are named.
std::string AttentionModule(const ModelSpec& spec, int64_t layer);

// s = α / r.
float LoraScaling(const Peft& peft);

}  // namespace zosched
