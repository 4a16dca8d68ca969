// Which tensor of a checkpoint is which parameter of a ModelSpec: the
// spellings a family's checkpoints use for one parameter, and the tensors a
// checkpoint may hold beside the parameters.
//
// Parameter names are those of models/model_tensors.h. Hugging Face's
// causal-LM classes hold the transformer as a submodule named by their
// base_model_prefix: "model" for OPT, LLaMA, Qwen2 and Qwen3, "transformer"
// for GPT-2. A checkpoint saved from that submodule alone (OPTModel,
// LlamaModel, GPT2Model) lacks the prefix, one saved from the whole model
// (OPTForCausalLM, LlamaForCausalLM, GPT2LMHeadModel) has it. So each
// parameter may be stored under two names: its name in model_tensors.h,
// which has the prefix ("model.layers.0.mlp.up_proj.weight") or lacks it
// (GPT-2's "h.0.attn.c_attn.weight", as the published openai-community/gpt2
// stores it), and that name with the prefix removed ("layers.0.mlp.up_proj.
// weight") or added ("transformer.h.0.attn.c_attn.weight", as
// GPT2LMHeadModel.save_pretrained writes it). Hugging Face's loader accepts
// both; so do LoadModelParameters and CheckModelParameters (safetensors.h).
//
// Functions taking a ModelSpec expect one that passes ValidateModelSpec, or
// one whose family is unset: then a name is looked up as given and no tensor
// of a checkpoint is taken for a parameter the spec lacks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "models/model.pb.h"
#include "models/model_tensors.h"
#include "runtime/checkpoint/checkpoint_files.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {

// The LM head's matrix, so named in every family. A tied head is the token
// embedding: checkpoints usually omit it, some (Qwen3's) store a copy.
inline constexpr char kLmHeadName[] = "lm_head.weight";

// Every parameter tensor of `spec` in the ModelSpec's order: the embedding
// tensors, each block's, the final norm's, the head's (model_tensors.h).
std::vector<TensorSpec> ModelParameters(const ModelSpec& spec);

// The family's base_model_prefix with its dot: "model." or "transformer.";
// empty for FAMILY_UNSPECIFIED.
absl::string_view BaseModelPrefix(Family family);

// The names under which parameter `name` of a `family` model may be stored,
// in the order to look them up: `name`, then `name` without the family's
// base-model prefix if it has it, or with it if it has not. The LM head
// (kLmHeadName) is outside the base model: its one name.
std::vector<std::string> StoredNames(Family family, const std::string& name);

// The tensor of `checkpoint` holding parameter `name` of `spec`: the first
// of StoredNames the checkpoint holds. For kLmHeadName of a spec whose head
// is tied, when the checkpoint stores no head, the token embedding (and
// `*tied_to` is set to its parameter name; else left empty). nullptr if the
// checkpoint holds neither.
const SafetensorsTensor* FindParameter(const CheckpointFiles& checkpoint, const ModelSpec& spec,
                                       const std::string& name, std::string* tied_to);

// The block index of the tensor stored as `name` under either spelling
// ("model.layers.12.mlp.up_proj.weight", "layers.12.…", "h.12.…",
// "transformer.h.12.…": 12), whether or not `spec` has that block or
// tensor; -1 for a name outside the blocks.
int64_t StoredLayer(const ModelSpec& spec, absl::string_view name);

// Whether the tensor stored as `name` is a buffer that older Hugging Face
// checkpoints hold beside the parameters but is not one: GPT-2's causal
// masks "….attn.bias" and "….attn.masked_bias" (not c_attn.bias), and the
// rotary frequencies "….rotary_emb.inv_freq".
bool IsNonParameterBuffer(absl::string_view name);

// Checks that `checkpoint` holds no parameter of a model of `spec`'s family
// that `spec` lacks, so that a checkpoint of another model is not loaded as
// this one. A tensor is such a parameter when it is stored under a block's
// name (StoredLayer >= 0) or, for a family whose parameter names carry the
// base-model prefix, under that prefix ("model.…"), and is none of:
// a parameter of `spec` (ModelParameters, under any of its StoredNames), a
// buffer (IsNonParameterBuffer), an adapter tensor ("….lora_A.weight",
// "….lora_B.weight", "<attention module>.prefix_keys" or ".prefix_values":
// a LoRA or prefix run's checkpoint holds them beside the base), or the copy
// of a tied head (kLmHeadName; never under either rule). Other tensors are
// not a model's and are ignored.
//
// Errors: InvalidArgument naming the file that holds the first such tensor
// (by block, then name; tensors outside the blocks first), the tensor, how
// many there are, and the likely cause: for a block `spec` does not have,
// "the checkpoint is probably of a bigger model of the family (a different
// size)"; else "of another model (a different size or variant of the
// family)". E.g. "ckpt/model-00002-of-00002.safetensors: tensor
// 'model.layers.2.input_layernorm.weight' (1 of 9 tensors not of model
// 'tiny-llama') is of block 2, but 'tiny-llama' has 2 blocks (0-1); the
// checkpoint, which has blocks up to 2, is probably of a bigger model of the
// family (a different size): ...".
absl::Status CheckNoForeignTensors(const CheckpointFiles& checkpoint, const ModelSpec& spec);

}  // namespace zosched
