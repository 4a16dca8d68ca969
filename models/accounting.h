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
//   2 · M  +  4 · seq_len · q
//
// where M = the elements of the block's projection matrices (q, k, v, o and
// the FFN's up, down and, for SwiGLU, gate: for OPT M = 4h² + 2hf), q =
// QueryWidth (num_heads · head_dim; h for every family but Qwen3), and
// 4 · seq_len · q counts the attention score product Q·Kᵀ (2 · seq_len · q)
// and the value product P·V (2 · seq_len · q), over the full seq_len×seq_len
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
  //   attention: normed input h + queries q + k and v 2·kv + scores
  //              heads·seq_len + context q
  //   FFN:       normed input h + inner f (2f for SwiGLU: gate and up)
  // where q = QueryWidth and kv = KvWidth (model_spec.h). Freed when the
  // block is done.
  int64_t workspace = 0;
  int64_t total() const { return carried + workspace; }
};
DualForwardActivationBytes DualForwardActivationBytesPerToken(
    const ModelSpec& spec, int64_t seq_len, DType dtype);

// Elements of workspace zosched's block forward kernels need for a
// micro-batch of `examples` sequences of `seq` tokens (one path at a time;
// attention never needs more than one (example, head)'s scores at once):
//   max(T4 · (max(h, q) + q + 2·kv) + seq², T4 · (h + f')),
//   T4 = examples · seq rounded up to a multiple of 4, q = QueryWidth,
//   kv = KvWidth, f' = f (2f for SwiGLU: gate and up)
// (attention: normed input / context, queries, keys, values, one head's
// scores; FFN: normed input / output, inner activations). For OPT and GPT-2
// (q = kv = h) that is max(4 · T4 · h + seq², T4 · (h + f)). The CPU kernels need exactly
// this (runtime/nn/decoder_forward.h). The GPU kernels keep q, k and v and use
// the attention phase's remaining T · h + seq² elements (or more) as the
// scratch of their cuBLAS attention: the fp32 scores of as many heads as
// fit, else of as many query rows as fit (kernel_plans/attention_plan.h).
// A schedule's WORKSPACE for a block forward is this many elements of the
// compute dtype.
// Less than DualForwardActivationBytesPerToken's workspace, which counts
// every head's scores as a textbook attention kernel holds them.
int64_t BlockForwardWorkspaceElements(const ModelSpec& spec, int64_t examples, int64_t seq);

// Elements of a block forward's perturbed-weights scratch: the block's
// vectors (norms, biases: its 1-D tensors) packed in block order, then room
// for its largest matrix. The forward perturbs each matrix into that room
// just before the GEMM that reads it (z depends only on the element's
// index, so the bits are those of perturbing the whole block at once), so
// the scratch holds one matrix, not the block (OPT-30B: 0.41 GB in FP16
// instead of 1.23 GB).
int64_t BlockPerturbedScratchElements(const ModelSpec& spec);

// The counts above that depend on the spec alone, derived once from its
// tensors, for callers that need them for every op of a schedule (lowering,
// validation). Each field equals the function it names.
struct ModelCounts {
  int64_t query_width = 0;                       // QueryWidth (model_spec.h)
  int64_t embedding_params = 0;                  // EmbeddingParams
  int64_t block_params = 0;                      // BlockParams
  int64_t final_norm_params = 0;                 // FinalNormParams
  int64_t head_params = 0;                       // HeadParams
  int64_t block_matrix_elements = 0;             // M of BlockForwardFlopsPerToken
  int64_t block_perturbed_scratch_elements = 0;  // BlockPerturbedScratchElements
  // Under LoRA or a prefix (the Peft counted with; 0 without): one block's
  // adapter elements (AdapterParams, models/adapters.h), and the FLOPs a
  // token spends in them: LoRA, per adapter 2r(in + out) for the two GEMMs
  // and r for the scaling; a prefix of k tokens, 4·k·QueryWidth for its
  // scores and its share of the context.
  int64_t adapter_params = 0;
  int64_t adapter_flops_per_token = 0;

  // BlockForwardFlopsPerToken(spec, seq_len).
  int64_t BlockForwardFlopsPerToken(int64_t seq_len) const {
    return 2 * block_matrix_elements + 4 * seq_len * query_width;
  }
};
ModelCounts CountModel(const ModelSpec& spec, const Peft& peft = Peft());

// Bytes of the rows of the LM head that prompt-based classification reads:
// `num_label_words` rows (e.g. 2 for SST-2's " terrible" / " great") of the
// head's input width (word_embed_proj_dim for OPT-350m, else h), in `dtype`.
int64_t LabelHeadSliceBytes(const ModelSpec& spec, int64_t num_label_words,
                            DType dtype);

}  // namespace zosched
