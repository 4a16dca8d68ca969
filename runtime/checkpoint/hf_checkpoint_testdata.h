// Hugging Face checkpoints as transformers writes them, for the checkpoint
// tests: each family's tensor names and shapes spelt out here by hand,
// independently of models/model_tensors.h (which the tests check against
// them), stored as BF16 and sharded with an index as save_pretrained does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.pb.h"

namespace zosched {

// One tensor of a checkpoint to write.
struct HfTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;  // elements(shape), exactly representable in `dtype`
  DType dtype = BF16;
};

// The parameters of a model of `spec` (family LLAMA, QWEN2, QWEN3 or GPT2)
// as the family's published checkpoints name and shape them, in PyTorch's
// module order: LLaMA and Qwen "model.embed_tokens.weight",
// "model.layers.N.self_attn.q_proj.weight" [heads·head_dim, h], Qwen2's
// q/k/v biases, Qwen3's "self_attn.q_norm.weight" [head_dim], ...,
// "model.norm.weight", an untied "lm_head.weight"; GPT-2 (bare, as
// openai-community/gpt2 stores it) "wte.weight", "wpe.weight",
// "h.N.attn.c_attn.weight" [h, 3h] (Conv1D), ..., "ln_f.weight". Values
// differ per tensor and element and are exact in BF16; `seed` varies them.
std::vector<HfTensor> HfParameters(const ModelSpec& spec, int seed = 0);

// `tensors` with every name prefixed by `prefix` (e.g. "transformer.").
std::vector<HfTensor> WithPrefix(const std::vector<HfTensor>& tensors, const std::string& prefix);

// The tensor of `tensors` named `name`, or nullptr.
const HfTensor* FindHf(const std::vector<HfTensor>& tensors, const std::string& name);

// Writes `tensors` as a checkpoint directory `dir` (made if missing): with
// shards == 1 the file "model.safetensors"; else the tensors split in order
// into `shards` runs "model-0000K-of-0000N.safetensors" and
// "model.safetensors.index.json" mapping each name to its shard, with
// "metadata": {"total_size": BYTES}. Every file has "format": "pt".
// Returns the index's path (shards > 1) or the file's; ADD_FAILUREs on
// an error.
std::string WriteHfCheckpoint(const std::string& dir, const std::vector<HfTensor>& tensors,
                              int shards);

// The name of shard `k` (1-based) of `n`: "model-00002-of-00003.safetensors".
std::string ShardName(int k, int n);

}  // namespace zosched
