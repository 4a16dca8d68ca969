// Exact accounting of a ModelSpec: parameters, bytes, FLOPs and activation
// memory. Everything else in zosched (lowering, simulation, memory plans)
// sizes itself from these numbers.
//
// Every function takes a spec that passed ValidateModelSpec (model_spec.h).
// Parameter counts are exact: they sum the tensors of model_tensors.h, i.e.
// what the family's published checkpoint holds.
#pragma once

#include <cstdint>

#include "models/model.pb.h"

namespace zosched {

// Parameters outside the decoder blocks, split the way ZO2 places them
// (embedding part, final norm and head stay on the GPU; blocks stream).
int64_t EmbeddingParams(const ModelSpec& spec);  // tokens + positions + project_in
int64_t BlockParams(const ModelSpec& spec);      // one decoder block
int64_t FinalNormParams(const ModelSpec& spec);
int64_t HeadParams(const ModelSpec& spec);  // project_out + untied LM head

// EmbeddingParams + num_layers × BlockParams + FinalNormParams + HeadParams.
int64_t TotalParams(const ModelSpec& spec);

// Bytes of one decoder block's parameters stored as `dtype`.
int64_t BlockBytes(const ModelSpec& spec, DType dtype);

// Forward FLOPs per token of one decoder block at sequence length `seq_len`
// (one multiply-add = 2 FLOPs):
//
//   2 · M  +  4 · seq_len · h
//
// where M = the elements of the block's projection matrices (q, k, v, o and
// the FFN's up, down and, for SwiGLU, gate: for OPT M = 4h² + 2hf), and
// 4 · seq_len · h counts the attention score product Q·Kᵀ (2 · seq_len · h)
// and the value product P·V (2 · seq_len · h), over the full seq_len×seq_len
// score matrix as a dense masked kernel computes it. Bias adds, norms,
// softmax and the activation are O(h) per token and not counted.
// A dual forward (θ+εz and θ-εz) costs twice this.
int64_t BlockForwardFlopsPerToken(const ModelSpec& spec, int64_t seq_len);

// Activation memory per token of one block during a ZO dual forward, in
// bytes of `dtype`. ZO has no backward pass, so nothing is kept for one;
// what a forward must hold is:
struct DualForwardActivationBytes {
  // The residual stream of both perturbation paths (+ε and -ε): 2 · h
  // elements, carried from block to block for the whole pass.
  int64_t carried = 0;
  // The peak working set of one block's forward for one path (the paths run
  // one after the other), the larger of
  //   attention: normed input h + q h + k and v 2·kv + scores heads·seq_len
  //              + context h
  //   FFN:       normed input h + inner f (2f for SwiGLU: gate and up)
  // where kv = num_kv_heads · head_dim. Freed when the block is done.
  int64_t workspace = 0;
  int64_t total() const { return carried + workspace; }
};
DualForwardActivationBytes DualForwardActivationBytesPerToken(
    const ModelSpec& spec, int64_t seq_len, DType dtype);

// Bytes of the rows of the LM head that prompt-based classification reads:
// `num_label_words` rows (e.g. 2 for SST-2's " terrible" / " great") of the
// head's input width (word_embed_proj_dim for OPT-350m, else h), in `dtype`.
int64_t LabelHeadSliceBytes(const ModelSpec& spec, int64_t num_label_words,
                            DType dtype);

}  // namespace zosched
