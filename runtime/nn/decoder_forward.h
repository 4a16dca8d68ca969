// The decoder forward pass of every family the runtime trains (OPT, GPT-2,
// LLaMA, Qwen2, Qwen3) in fp32 on the CPU (Eigen), reading weights from flat
// parameter parts laid out as in runtime/nn/param_layout.h, each tensor found
// by its TensorSlot.
//
// Shapes: a batch is `examples` sequences of `seq` tokens, padded on the
// right; lengths[e] in [1, seq] is the number of real tokens of example e.
// Activations are row-major [examples * seq, h] (token t of example e is row
// e * seq + t, at position t). h = hidden_size, f = ffn_size, e = EmbedDim
// (word embedding width), V = vocab_size, d = HeadDim, q = QueryWidth
// (heads · d), kv = KvWidth (kv_heads · d).
//
// A block, by family (models/model.proto):
//   x = x + o_proj(attention(norm1(x)))
//   x = x + down(act(up(norm2(x))))          OPT (ReLU), GPT-2 (GELU, tanh)
//   x = x + down(silu(gate(x')) · up(x'))    LLaMA, Qwen (x' = norm2(x))
// with LayerNorm (OPT, GPT-2) or RMSNorm (LLaMA, Qwen; eps NormEps), GPT-2's
// fused c_attn and Conv1D [in, out] weights, grouped-query attention (query
// head i reads key/value head i / (heads / kv_heads)), Qwen2's q/k/v biases,
// Qwen3's per-head RMSNorm of q and k, then the rotary embedding
// (rotary_table.h) at each token's position for LLaMA and Qwen.
//
// Supported models: CheckRuntimeSupports says which.
//
// Numerics and determinism (the contract the ZO runtime relies on):
//  - everything is fp32; softmax with max subtraction; the queries scaled
//    by 1/sqrt(d) after their rotary embedding;
//  - the same inputs give bitwise the same outputs, whatever the addresses
//    of the buffers;
//  - an example's outputs do not depend on the other examples of the batch
//    (bitwise: the same example alone or inside a batch of any size gives
//    the same bits), nor on the token values at its padding positions;
//  - causal: a position's hidden state and logits do not depend (bitwise)
//    on later tokens.
// The projections run as Eigen GEMMs over all the batch's tokens at once,
// with the token count rounded up to a multiple of 4 so that every token
// takes the same GEMM micro-kernel whatever its position in the batch (see
// decoder_forward.cc). Attention runs per example and head over its real tokens
// only. No global state. BlockForward may spread its work over a
// ThreadTeam: the projections over token ranges of whole 4-token panels,
// attention over (example, head) pairs, the row-wise steps over rows; each
// value is computed by the same code whatever range holds it, so the bits
// do not depend on the team's size.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "models/model.pb.h"
#include "runtime/nn/block_lora.h"
#include "runtime/nn/block_prefix.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/rotary_table.h"
#include "runtime/nn/thread_team.h"

namespace zosched {

// OK if this file can run `spec`: any family, pre-norm blocks (not
// OPT-350m's post-norm ones), queries, keys and values at least as wide
// together as h. `spec` must also pass ValidateModelSpec.
//
// Errors: InvalidArgument naming the model and the first unsupported
// feature, e.g. "model 'opt-350m' is post-norm (norm_placement POST_NORM);
// the runtime runs pre-norm blocks".
absl::Status CheckRuntimeSupports(const ModelSpec& spec);

// Rows of token embeddings EmbedRows reads: T = examples · seq, rounded up
// to a multiple of 4 when the model projects them (e != h; the GEMM's token
// panel, see decoder_forward.cc).
int64_t EmbedTokenRows(const ModelSpec& spec, int examples, int seq);

// Floats of workspace EmbedRows needs: 0 when e == h, else
// EmbedTokenRows · h (the projected rows).
int64_t EmbedWorkspaceFloats(const ModelSpec& spec, int examples, int seq);

// The embedding from rows already gathered (and, in ZO, perturbed):
// hidden[t, :] = token_rows[t, :] (· project_in^T when e != h)
//                + position_rows[t mod seq, :]
//   token_rows:    [EmbedTokenRows, e]; rows past T are padding (finite)
//   position_rows: [seq, h], the position table's rows FirstPositionRow ..
//                  + seq (OPT's learned positions are offset by 2; padding
//                  positions use their index too, they are masked later);
//                  nullptr for a model without a position table (rotary)
//   project_in:    [h, e], or nullptr when e == h
//   workspace:     EmbedWorkspaceFloats floats, scratch
//   hidden:        [examples * seq * h], written
void EmbedRows(const ModelSpec& spec, const float* token_rows, const float* position_rows,
               const float* project_in, int examples, int seq, float* workspace,
               float* hidden);

// EmbedRows of embed_tokens[tokens[e, t]] and the position table, all from
// the flat embedding part (the reference: allocates its scratch), token t
// at position first_position + t (a prefix's k: models/adapters.h).
//   tokens: [examples * seq], each in [0, V)
// CHECK-fails on first_position + seq > max_positions or a token out of
// range.
void Embed(const ModelSpec& spec, const float* embedding_part,
           const int32_t* tokens, int examples, int seq, float* hidden,
           int64_t first_position = 0);

// Floats of workspace BlockForward needs for this batch shape: the
// kernels' contract, models/accounting.h's BlockForwardWorkspaceElements
// (T4 = examples · seq rounded up to kTokenPanel = 4 tokens).
int64_t BlockWorkspaceFloats(const ModelSpec& spec, int examples, int seq);

// Where BlockForward reads a block's weights: it asks for each tensor (by
// its slice of the block part, param_layout.h) just before it reads it. A
// matrix need stay valid only until the next matrix is asked for (a source
// may perturb every matrix into one room: runtime/nn/perturbed_block_layout.h);
// a vector for the whole forward.
class BlockWeightSource {
 public:
  virtual ~BlockWeightSource() = default;
  virtual const float* Get(const TensorSlice& tensor) = 0;
};

// The weights of a flat block part, in place.
class PartWeights : public BlockWeightSource {
 public:
  explicit PartWeights(const float* part) : part_(part) {}
  const float* Get(const TensorSlice& tensor) override { return part_ + tensor.offset; }

 private:
  const float* part_;
};

// One pre-norm decoder block (see the top of this file), in place on the
// residual stream, with causal attention in which query i of example e
// attends to keys j <= i, j < lengths[e]. Rows at padding positions come out
// finite but otherwise meaningless.
//   block_part: the flat block part (any layer; all share one layout)
//   lengths:    [examples], each in [1, seq]
//   hidden:     [examples * seq * h], read and written
//   workspace:  BlockWorkspaceFloats(spec, examples, seq) floats, scratch
// CHECK-fails on a length out of range. `captured`: as below.
struct KeyValueRows;
void BlockForward(const ModelSpec& spec, const float* block_part,
                  const int32_t* lengths, int examples, int seq, float* hidden,
                  float* workspace, KeyValueRows* captured = nullptr);
// The same with the weights from `weights`, on `team`'s threads (null: the
// calling thread only; bitwise the same either way), rotating by `rotary`
// (at least seq positions; null: made for this call, for a rotary model).
// With a team, attention scores of members other than 0 live in a
// per-thread buffer of seq² floats (grown once), outside `workspace`.
// With `lora`, each adapted projection adds its adapter's term
// (block_lora.h) before its epilogue; the adapter's scratch is a
// per-thread buffer too. With `prefix` (block_prefix.h), each query
// attends to the prefix's k keys and values, then to the causal real ones,
// and the real tokens sit at positions k + t (rotary: `rotary` covers
// k + seq positions; seq + k <= max_positions); every member's scores and
// the (example, head)'s concatenated keys and values live in its
// per-thread buffer. With `captured`, the block's keys and values [T, kv]
// each (T = examples · seq; the keys after Qwen3's k-norm and the rotary
// embedding, as attention reads them) are written there too.
struct KeyValueRows {
  float* keys = nullptr;    // [T, KvWidth]
  float* values = nullptr;  // [T, KvWidth]
};
void BlockForward(const ModelSpec& spec, BlockWeightSource& weights, const int32_t* lengths,
                  int examples, int seq, float* hidden, float* workspace,
                  ThreadTeam* team = nullptr, const RotaryTable* rotary = nullptr,
                  const BlockLora* lora = nullptr, const BlockPrefix* prefix = nullptr,
                  KeyValueRows* captured = nullptr);

// Floats of workspace LabelLogitsFromRows and HeadLossFromRows need:
// h + e + examples · n_labels.
int64_t HeadLossWorkspaceFloats(const ModelSpec& spec, int examples, int n_labels);

// Prompt-based classification logits: for each example, the final norm
// (when spec.final_norm()) of the hidden state at its last real position
// lengths[e] - 1, then project_out (when e != h), dotted with each label
// word's row of the LM head (the untied lm_head, or the token table).
//   head_part:   the flat head part
//   label_rows:  [n_labels, e], the label words' rows of the LM head
//   hidden:      [examples * seq * h], the last block's output
//   workspace:   HeadLossWorkspaceFloats floats, scratch
//   logits:      [examples * n_labels], written
void LabelLogitsFromRows(const ModelSpec& spec, const float* head_part,
                         const float* label_rows, const float* hidden,
                         const int32_t* lengths, int examples, int seq, int n_labels,
                         float* workspace, float* logits);

// MeZO's classification loss: per example, the cross-entropy of the label
// logits over the n_labels label words with target labels[e]:
//   losses[e] = logsumexp(logits[e, :]) - logits[e, labels[e]]   (nats)
//   labels: [examples], each in [0, n_labels)
//   losses: [examples], written
void HeadLossFromRows(const ModelSpec& spec, const float* head_part, const float* label_rows,
                      const float* hidden, const int32_t* lengths, int examples, int seq,
                      int n_labels, const int32_t* labels, float* workspace, float* losses);

// The same two from the flat head and embedding parts and the label words'
// token ids (each in [0, V)), the reference: they gather the rows (from the
// untied head, or the token table) and allocate their scratch.
void LabelLogits(const ModelSpec& spec, const float* head_part,
                 const float* embedding_part, const float* hidden,
                 const int32_t* lengths, int examples, int seq,
                 const int32_t* label_words, int n_labels, float* logits);
void HeadLoss(const ModelSpec& spec, const float* head_part,
              const float* embedding_part, const float* hidden,
              const int32_t* lengths, int examples, int seq,
              const int32_t* label_words, int n_labels, const int32_t* labels,
              float* losses);

// Full-vocabulary LM logits at every position (final norm, project_out,
// the LM head), for language-modelling losses and tests. Slow:
// [examples * seq, e] x [e, V].
//   logits: [examples * seq * V], written
void LmLogits(const ModelSpec& spec, const float* head_part,
              const float* embedding_part, const float* hidden, int examples,
              int seq, float* logits);

}  // namespace zosched
