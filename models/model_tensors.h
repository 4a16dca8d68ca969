// The parameter tensors of a ModelSpec, named and shaped as in the family's
// published Hugging Face checkpoints, so that accounting counts exactly what
// a checkpoint holds and loaders can match tensors by name.
//
// Shapes are as stored: PyTorch nn.Linear weights are [out, in]; GPT-2's
// Conv1D weights are [in, out] (WeightsInOut) and its q, k and v projections
// are fused into one `attn.c_attn` tensor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.pb.h"

namespace zosched {

enum class TensorRole {
  kEmbedding,  // token or position table
  kMatrix,     // a projection's weight matrix
  kBias,       // a projection's bias vector
  kNorm,       // a norm's weight or bias
};

// What a tensor is in the model's computation, whatever its family calls
// it: the kernels find their operands by slot (runtime/nn/param_layout.h).
// Weight and bias of one projection or norm are two slots.
enum class TensorSlot {
  kUnspecified,
  kTokenTable,     // embed_tokens / wte [V, e]
  kPositionTable,  // learned positions [rows, h]
  kProjectIn,      // OPT-350m's project_in [h, e]
  kAttnNormWeight, kAttnNormBias,
  kQkvWeight, kQkvBias,  // GPT-2's fused c_attn [h, q + 2kv] (Conv1D), [q + 2kv]
  kQWeight, kQBias, kKWeight, kKBias, kVWeight, kVBias,
  kQNorm, kKNorm,  // Qwen3's per-head RMSNorm weights [head_dim]
  kOWeight, kOBias,
  kFfnNormWeight, kFfnNormBias,
  kGateWeight, kGateBias, kUpWeight, kUpBias, kDownWeight, kDownBias,
  kFinalNormWeight, kFinalNormBias,
  kProjectOut,  // OPT-350m's project_out [e, h]
  kLmHead,      // an untied LM head [V, e]
};

struct TensorSpec {
  std::string name;            // e.g. "model.decoder.layers.3.fc1.weight"
  std::vector<int64_t> shape;  // as stored in the checkpoint
  TensorRole role;
  TensorSlot slot = TensorSlot::kUnspecified;  // set for every tensor of a ModelSpec

  // Product of `shape`.
  int64_t elements() const;
  // MeZO applies weight decay to every tensor except biases and norms.
  bool weight_decay() const {
    return role == TensorRole::kEmbedding || role == TensorRole::kMatrix;
  }
};

// Token embeddings, the learned position table (if any) and OPT's project_in.
std::vector<TensorSpec> EmbeddingTensors(const ModelSpec& spec);

// The tensors of decoder block `layer` (0-based) in a fixed order: attention
// norm, q, k and v projections (GPT-2: the fused c_attn), Qwen3's q_norm and
// k_norm, the output projection, FFN norm, FFN projections (gate, up, down).
// Every block of a model has the same shapes; only the names differ. Qwen2
// and Qwen3 checkpoints name their tensors as LLaMA's do.
std::vector<TensorSpec> BlockTensors(const ModelSpec& spec, int64_t layer);

// The norm after the last block (empty when spec.final_norm() is false).
std::vector<TensorSpec> FinalNormTensors(const ModelSpec& spec);

// OPT's project_out and, when the head is not tied, the LM head matrix.
std::vector<TensorSpec> HeadTensors(const ModelSpec& spec);

// Whether the family stores projection weights as [in, out] (GPT-2's
// Conv1D) rather than nn.Linear's [out, in].
bool WeightsInOut(const ModelSpec& spec);

// Sum of elements() over `tensors`.
int64_t CountElements(const std::vector<TensorSpec>& tensors);

}  // namespace zosched
