// LoRA adapters and prefix-tuning prefixes (models/adapters.h) in Hugging
// Face PEFT's on-disk layout, so that a run's adapters can be merged or
// served with PEFT (PeftModel.from_pretrained(base, DIR)) and PEFT's
// adapters trained here.
//
// A PEFT adapter directory holds two files. For LoRA:
//   adapter_model.safetensors  every adapter tensor, named
//                              "base_model.model." + its TensorSpec name
//                              ("base_model.model.model.decoder.layers.3.
//                              self_attn.q_proj.lora_A.weight"): A [r, in],
//                              B [out, r], F32, F16 or BF16;
//   adapter_config.json        LoraConfig: peft_type "LORA", r, lora_alpha,
//                              target_modules (PEFT's module names: "q_proj",
//                              "fc1", ...), and options this loader requires
//                              at PEFT's defaults (see ReadPeftConfig).
// For a prefix of k virtual tokens (PEFT's prefix tuning without
// projection, whose prefix is the KV cache of k tokens):
//   adapter_model.safetensors  one tensor "prompt_embeddings" (the
//                              PrefixEncoder's embedding), [k, num_layers ·
//                              2 · token_dim], F32, F16 or BF16, token_dim =
//                              kv = KvWidth (kv_heads · head_dim). Row j is
//                              virtual token j: for each layer l in order,
//                              its key then its value, kv elements each,
//                              heads-major then head_dim; element
//                              [j, 2l · kv + c] is key c of token j in layer
//                              l, [j, (2l + 1) · kv + c] its value c. (PEFT's
//                              get_prompt views a row as [num_layers · 2,
//                              heads, head_dim] and splits it into one
//                              (key, value) pair per layer; keys are as the
//                              attention reads them, after the rotary
//                              embedding at positions 0 .. k - 1.)
//   adapter_config.json        PrefixTuningConfig: peft_type
//                              "PREFIX_TUNING", num_virtual_tokens k,
//                              token_dim, num_layers, num_attention_heads
//                              (kv_heads: PEFT's values for a grouped-query
//                              model), prefix_projection false.
//
// In memory the adapters are one flat fp32 ADAPTER_PART per decoder block,
// AdapterParams(spec, peft) elements: for LoRA, for each adapter of
// BlockAdapters(spec, peft, b), A row-major at its a_offset then B
// row-major at its b_offset; for a prefix, block b's keys [k, kv] then its
// values [k, kv], row-major.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"

namespace zosched {

// The file names within an adapter directory, as PEFT names them.
inline constexpr char kPeftConfigFile[] = "adapter_config.json";
inline constexpr char kPeftWeightsFile[] = "adapter_model.safetensors";

// Writes the adapters of `spec` under `peft` (kind LORA or PREFIX;
// ValidatePeft must pass) to the directory `dir`, created if missing (its
// parent must exist): `blocks` holds spec.num_layers() ADAPTER_PARTs, block
// b's at blocks[b], AdapterParams(spec, peft) fp32 elements each.
//
// adapter_model.safetensors holds every LoRA adapter tensor, in block and
// layout order, or a prefix's "prompt_embeddings", converted to `dtype`
// (FP32, FP16 or BF16; round-to-nearest-even), with metadata
// {"format": "pt"} as PEFT writes it. adapter_config.json is what PEFT's
// save_pretrained writes (keys sorted, indent 2), for both: task_type
// "CAUSAL_LM", inference_mode true, base_model_name_or_path `base_model` (a
// Hugging Face id or path PEFT loads the base from; may be empty), revision
// null; for LoRA (LoraConfig): peft_type "LORA", r, lora_alpha (an integer
// when α is integer-valued), lora_dropout 0.0, target_modules (the targets'
// LoraTargetName, sorted), bias "none", fan_in_fan_out false,
// modules_to_save null, init_lora_weights true, use_rslora false; for a
// prefix (PrefixTuningConfig): peft_type "PREFIX_TUNING",
// num_virtual_tokens k, token_dim KvWidth, num_layers, num_attention_heads
// KvHeads, num_transformer_submodules 1, encoder_hidden_size KvWidth (as
// PEFT defaults it to token_dim; unused without a projection),
// prefix_projection false.
//
// Each file is written under a temporary name in `dir`, synced, then renamed
// over its final name, so a crash never leaves a half-written file under
// either name (it may leave the new weights beside the old config: the
// weights are written first).
//
// Errors: InvalidArgument for a `peft` without adapters (kind PEFT_NONE) or
// failing ValidatePeft, a `dtype` other than FP32/FP16/BF16, a count of
// blocks other than num_layers, or a block of another size (naming it, its
// size and AdapterParams); the OS error's code naming the path when `dir`
// cannot be created (or is not a directory) or a file cannot be written.
absl::Status SavePeftAdapters(const std::string& dir, const ModelSpec& spec, const Peft& peft,
                              const std::vector<std::vector<float>>& blocks, DType dtype,
                              const std::string& base_model);

// Reads `dir`/adapter_config.json into a Peft for `spec`, of the kind its
// "peft_type" names.
//
// "LORA": kind LORA, lora_rank from "r" (an integer), lora_alpha from
// "lora_alpha" (a number), lora_targets (in LoraTarget order) from
// "target_modules", a list of PEFT module names or a single name as a
// string, each one of the names LoraTargetName gives `spec`'s targets
// (duplicates count once, as PEFT takes a set). "lora_dropout" is read as
// any number and ignored: dropout does not apply to zeroth-order forward
// passes, which evaluate the model deterministically. "init_lora_weights"
// is ignored. Refused, because they change what the adapters compute in
// ways this runtime does not implement (each absent or null is fine):
// "use_rslora" true (scaling α / √r), "fan_in_fan_out" true (transposed
// weights), "bias" other than "none", "layers_to_transform" or
// "layers_pattern" set (adapters on some layers only), "use_dora" true,
// "lora_bias" true, a non-empty "rank_pattern" or "alpha_pattern"
// (per-module r or α).
//
// "PREFIX_TUNING": kind PREFIX, prefix_tokens from "num_virtual_tokens" (an
// integer). "token_dim", "num_layers" and "num_attention_heads" must be
// `spec`'s KvWidth, num_layers and KvHeads (the layout of
// "prompt_embeddings"; PEFT's values for the model, grouped-query or not);
// "num_transformer_submodules" 1 (or absent: a decoder-only model);
// "prefix_projection" false or absent (a reparametrised prefix needs its
// MLP; zosched trains the prefix directly). "encoder_hidden_size" and
// "init_weights" do not change a prefix without projection and are
// ignored.
//
// For both, "task_type", "inference_mode", "base_model_name_or_path" and
// "revision" do not change the adapters and are ignored; a non-empty
// "modules_to_save" (fully trained modules beside the adapters) is refused.
//
// Errors, each message naming the file: those of ReadFileToString
// (NotFound naming the path of a missing file); InvalidArgument for text
// that is not a JSON object, "peft_type" other than "LORA" or
// "PREFIX_TUNING" (naming both), "r", "lora_alpha" or "num_virtual_tokens"
// missing or not a number, an unknown module name (listing `spec`'s valid
// names), a refused option or a prefix's size not `spec`'s (naming the key,
// its value and the value expected), or a Peft failing ValidatePeft (its
// message after the file's name).
absl::StatusOr<Peft> ReadPeftConfig(const std::string& dir, const ModelSpec& spec);

// Reads the adapters of `spec` under `peft` (kind LORA or PREFIX;
// ValidatePeft must pass; usually ReadPeftConfig's) from
// `dir`/adapter_model.safetensors and returns spec.num_layers()
// ADAPTER_PARTs in fp32 (AdapterParams elements each; F16 and BF16 widen
// exactly).
//
// A LoRA tensor is found under its TensorSpec name with or without PEFT's
// "base_model.model." prefix, and with PEFT's older per-adapter spelling
// "….lora_A.default.weight" as well as "….lora_A.weight". A prefix is the
// one tensor "prompt_embeddings".
//
// Checks, in this order, so that the first mismatch is the one named: every
// expected tensor (LoRA: block by block, in layout order) present, of the
// expected shape and of dtype F32, F16 or BF16; no tensor in the file
// beyond them (the adapters of another target set, rank pattern, model or
// PEFT method, or a tensor stored under two spellings); each value finite
// (NaN or ±Inf would make every loss NaN).
//
// Errors, each message naming the file and the tensor: those of
// ReadSafetensors (NotFound for a missing file); InvalidArgument for a
// `peft` without adapters or failing ValidatePeft; NotFound for a missing
// tensor; InvalidArgument for a shape other than the expected one (both
// shown; with the file's rank when only a LoRA r differs, with k,
// num_layers and token_dim for a prefix), another dtype, an unexpected
// tensor (the first by name), or a NaN/±Inf value (its index).
absl::StatusOr<std::vector<std::vector<float>>> LoadPeftAdapters(const std::string& dir,
                                                                 const ModelSpec& spec,
                                                                 const Peft& peft);

}  // namespace zosched
