// LoRA adapters (models/adapters.h) in Hugging Face PEFT's on-disk layout,
// so that a run's adapters can be merged or served with PEFT
// (PeftModel.from_pretrained(base, DIR)) and PEFT's adapters trained here.
//
// A PEFT adapter directory holds two files:
//   adapter_model.safetensors  every adapter tensor, named
//                              "base_model.model." + its TensorSpec name
//                              ("base_model.model.model.decoder.layers.3.
//                              self_attn.q_proj.lora_A.weight"): A [r, in],
//                              B [out, r], F32, F16 or BF16;
//   adapter_config.json        LoraConfig: peft_type "LORA", r, lora_alpha,
//                              target_modules (PEFT's module names: "q_proj",
//                              "fc1", ...), and options this loader requires
//                              at PEFT's defaults (see ReadPeftConfig).
//
// In memory the adapters are one flat fp32 ADAPTER_PART per decoder block:
// for each adapter of BlockAdapters(spec, peft, b), A row-major at its
// a_offset then B row-major at its b_offset, AdapterParams(spec, peft)
// elements in all.
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

// Writes the LoRA adapters of `spec` under `peft` (kind LORA; ValidatePeft
// must pass) to the directory `dir`, created if missing (its parent must
// exist): `blocks` holds spec.num_layers() ADAPTER_PARTs, block b's at
// blocks[b], AdapterParams(spec, peft) fp32 elements each.
//
// adapter_model.safetensors holds every adapter tensor, in block and layout
// order, converted to `dtype` (FP32, FP16 or BF16; round-to-nearest-even),
// with metadata {"format": "pt"} as PEFT writes it. adapter_config.json is
// what PEFT's LoraConfig.save_pretrained writes (keys sorted, indent 2):
// peft_type "LORA", task_type "CAUSAL_LM", r, lora_alpha (an integer when
// α is integer-valued), lora_dropout 0.0, target_modules (the targets'
// LoraTargetName, sorted), bias "none", fan_in_fan_out false,
// inference_mode true, base_model_name_or_path `base_model` (a Hugging Face
// id or path PEFT loads the base from; may be empty), modules_to_save null,
// init_lora_weights true, revision null, use_rslora false.
//
// Each file is written under a temporary name in `dir`, synced, then renamed
// over its final name, so a crash never leaves a half-written file under
// either name (it may leave the new weights beside the old config: the
// weights are written first).
//
// Errors: InvalidArgument for a `peft` without LoRA or failing ValidatePeft,
// a `dtype` other than FP32/FP16/BF16, a count of blocks other than
// num_layers, or a block of another size (naming it, its size and
// AdapterParams); the OS error's code naming the path when `dir` cannot be
// created (or is not a directory) or a file cannot be written.
absl::Status SavePeftAdapters(const std::string& dir, const ModelSpec& spec, const Peft& peft,
                              const std::vector<std::vector<float>>& blocks, DType dtype,
                              const std::string& base_model);

// Reads `dir`/adapter_config.json into a Peft of kind LORA for `spec`:
// lora_rank from "r" (an integer), lora_alpha from "lora_alpha" (a number),
// lora_targets (in LoraTarget order) from "target_modules", a list of PEFT
// module names or a single name as a string, each one of the names
// LoraTargetName gives `spec`'s targets (duplicates count once, as PEFT
// takes a set).
//
// "lora_dropout" is read as any number and ignored: dropout does not apply
// to zeroth-order forward passes, which evaluate the model deterministically.
// "task_type", "inference_mode", "base_model_name_or_path", "revision" and
// "init_lora_weights" do not change the adapters and are ignored.
//
// Refused, because they change what the adapters compute in ways this
// runtime does not implement (each absent or null is fine): "use_rslora"
// true (scaling α / √r), "fan_in_fan_out" true (transposed weights), "bias"
// other than "none", "layers_to_transform" or "layers_pattern" set
// (adapters on some layers only), "use_dora" true, "lora_bias" true, a
// non-empty "rank_pattern" or "alpha_pattern" (per-module r or α), a
// non-empty "modules_to_save" (fully trained modules beside the adapters).
//
// Errors, each message naming the file: those of ReadFileToString
// (NotFound naming the path of a missing file); InvalidArgument for text
// that is not a JSON object, "peft_type" other than "LORA", "r" or
// "lora_alpha" missing or not a number, an unknown module name (listing
// `spec`'s valid names), a refused option (naming the key and its value),
// or a Peft failing ValidatePeft (its message after the file's name).
absl::StatusOr<Peft> ReadPeftConfig(const std::string& dir, const ModelSpec& spec);

// Reads the adapters of `spec` under `peft` (kind LORA; ValidatePeft must
// pass; usually ReadPeftConfig's) from `dir`/adapter_model.safetensors and
// returns spec.num_layers() ADAPTER_PARTs in fp32 (AdapterParams elements
// each; F16 and BF16 widen exactly).
//
// A tensor is found under its TensorSpec name with or without PEFT's
// "base_model.model." prefix, and with PEFT's older per-adapter spelling
// "….lora_A.default.weight" as well as "….lora_A.weight".
//
// Checks, in this order, so that the first mismatch is the one named: every
// expected tensor (block by block, in layout order) present, of the
// expected shape and of dtype F32, F16 or BF16; no tensor in the file
// beyond them (the adapters of another target set, rank pattern or model,
// or a tensor stored under two spellings); each value finite (NaN or ±Inf
// would make every loss NaN).
//
// Errors, each message naming the file and the tensor: those of
// ReadSafetensors (NotFound for a missing file); InvalidArgument for a
// `peft` without LoRA or failing ValidatePeft; NotFound for a missing
// tensor; InvalidArgument for a shape other than the expected one (both
// shown, with the file's rank when only r differs), another dtype, an
// unexpected tensor (the first by name), or a NaN/±Inf value (its index).
absl::StatusOr<std::vector<std::vector<float>>> LoadPeftAdapters(const std::string& dir,
                                                                 const ModelSpec& spec,
                                                                 const Peft& peft);

}  // namespace zosched
