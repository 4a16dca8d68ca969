// The parameter tensors of a ModelSpec, named and shaped as in the family's
// published Hugging Face checkpoints, so that accounting counts exactly what
// a checkpoint holds and loaders can match tensors by name.
//
// Shapes are as stored: PyTorch nn.Linear weights are [out, in]; GPT-2's
// Conv1D weights are [in, out] and its q, k and v projections are fused into
// one `attn.c_attn` tensor.
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

struct TensorSpec {
  std::string name;            // e.g. "model.decoder.layers.3.fc1.weight"
  std::vector<int64_t> shape;  // as stored in the checkpoint
  TensorRole role;

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

// Sum of elements() over `tensors`.
int64_t CountElements(const std::vector<TensorSpec>& tensors);

}  // namespace zosched
