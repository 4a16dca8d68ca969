// The decoder forward pass of every family (OPT, GPT-2, LLaMA, Qwen2, Qwen3)
// on the GPU: the CUDA backend's counterpart of runtime/nn/decoder_forward.h
// (EmbedRows, BlockForward, HeadLossFromRows), with the same inputs, shapes
// and workspace sizes, so that the memory plan made from runtime/nn's
// workspace formulas holds for both backends.
//
// Shapes as in decoder_forward.h: `examples` sequences of `seq` tokens,
// padded on the right; lengths[e] in [1, seq]; activations row-major
// [examples · seq, h] (token t of example e is row e · seq + t, at position
// t, or k + t behind a prefix of k); h = hidden_size, f = ffn_size, e =
// EmbedDim, d = HeadDim, q = QueryWidth (heads · d), kv = KvWidth
// (kv_heads · d). Every pointer is device memory; every array except
// lengths, labels (int32), losses and the rotary table (fp32) holds
// elements of `type` (FP32, FP16 or BF16), parameter parts included, laid
// out as in runtime/nn/param_layout.h.
//
// A block, by family, as runtime/nn (kernels of this package):
//   norm1 (LayerNorm or RMSNorm, row_norm.h); the q, k, v projections
//   (gemm.h; GPT-2: one fused c_attn GEMM into [T, q + 2kv] rows, its
//   Conv1D [in, out] weights read through LinearLayout::weight_in_out;
//   biases and activations: bias_activation.h); Qwen3's per-head QK-norm
//   and the rotary embedding of q and k heads (head_norm_rotary.h, the
//   uploaded RotaryTable's angles); causal attention with grouped-query
//   heads (attention.h: query head i reads key/value head i / (heads /
//   kv_heads), queries scaled by 1/sqrt(d) in the scores' GEMM); o_proj
//   from the context rows; residual add (residual_add.h); norm2; the FFN:
//   up with ReLU or GELU (tanh), or SwiGLU's gate and up then silu(gate) ·
//   up (swiglu.h); down; residual add. Under LoRA (GpuBlockLora) each
//   adapted projection adds its adapter's term before its epilogue; with a
//   prefix (GpuBlockPrefix) attention reads the prefix's keys and values
//   before the real tokens', which sit at positions k, k + 1, ...
//
// Numerics: storage in `type`, arithmetic in fp32 (projections: cuBLAS with
// fp32 accumulation); each stored intermediate (normed rows, q, k, v after
// their bias, then after QK-norm and rotary, context, projections, FFN
// activations, the residual stream) is rounded to `type`. Per-element math
// is runtime/nn/element_math.h's and row_math.h's, the CPU's bits for the
// same inputs; the reductions (GEMMs, norms, softmax) sum in other orders,
// so the GPU agrees with the CPU to rounding, not bitwise (the tolerances
// are stated in decoder_forward_gpu_test.cc).
//
// Determinism: everything runs on gemm.stream() (or `stream`) in a fixed
// order; the kernels reduce in fixed orders without atomics, and the GEMMs
// are reproducible with the Gemm's own workspace: the same inputs give the
// same bits run to run (same GPU model and toolkit). An example's outputs
// do not depend on the values of the batch's other examples (bitwise); they
// may change in the last bits with the batch's shape (examples, seq),
// because cuBLAS picks its algorithm by shape.
//
// Nothing is allocated and nothing waits for the device: each call only
// enqueues. Errors: InvalidArgument for inconsistent arguments (checked
// before anything is enqueued); the CUDA or cuBLAS error of an enqueue.
// Device-side values are not checked: a length or label out of range gives
// NaN losses (attention.h, head_loss.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/nn/param_layout.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/cuda/nn/row_math.h"
#include "runtime/dtype/element.h"

namespace zosched {

// One tensor of a part: its first element's offset from the part's start
// and its element count (runtime/nn/param_layout.h); offset -1 when the
// model has no tensor in that slot.
struct GpuTensor {
  int64_t offset = -1;
  int64_t elements = 0;
  bool present() const { return offset >= 0; }
};

// What the GPU forward needs of a model: its dimensions and kinds, and
// where each TensorSlot's tensor lies in the block and head parts.
// Computed once per schedule.
struct DecoderGpuModel {
  ModelSpec spec;  // for the workspace formulas (runtime/nn/decoder_forward.h)
  int64_t h = 0;         // hidden_size
  int64_t f = 0;         // ffn_size
  int64_t e = 0;         // EmbedDim: word_embed_proj_dim, or h
  int64_t heads = 0;     // num_heads
  int64_t kv_heads = 0;  // KvHeads
  int64_t head_dim = 0;  // HeadDim
  int64_t q_width = 0;   // QueryWidth: heads · head_dim
  int64_t kv_width = 0;  // KvWidth: kv_heads · head_dim
  NormKind norm = NormKind::kLayerNorm;  // every norm of the model
  float norm_eps = 0.0f;                 // NormEps
  bool swiglu = false;                   // the FFN is SwiGLU (gate, up, down)
  PointwiseActivation activation = PointwiseActivation::kRelu;  // after up, when not SwiGLU
  bool weights_in_out = false;  // WeightsInOut: GPT-2's Conv1D [in, out] matrices
  bool fused_qkv = false;       // one q | k | v projection (GPT-2's c_attn)
  bool has_positions = false;   // a learned position table (not rotary)
  bool rotary = false;          // positional ROTARY: the block needs a GpuRotary

  // The tensor in `slot` of the block part (every block has the same
  // layout) or of the head part; absent (offset -1) when there is none.
  const GpuTensor& Block(TensorSlot slot) const { return Find(block_, slot); }
  const GpuTensor& Head(TensorSlot slot) const { return Find(head_, slot); }

  // Errors: InvalidArgument from CheckRuntimeSupports (runtime/nn/
  // decoder_forward.h) when the forward cannot run `spec`: the GPU runs
  // exactly the models the CPU runs.
  static absl::StatusOr<DecoderGpuModel> From(const ModelSpec& spec);

 private:
  static const GpuTensor& Find(const std::vector<GpuTensor>& tensors, TensorSlot slot);

  std::vector<GpuTensor> block_, head_;  // indexed by TensorSlot
};

// The rotary embedding's angles on the device: RotaryTable(spec,
// positions).values() (runtime/nn/rotary_table.h) uploaded as they are, so
// both backends rotate by the same fp32 cos and sin.
struct GpuRotary {
  const float* values = nullptr;  // fp32 [positions][cos d/2 | sin d/2], device
  int positions = 0;
};

// The embedding from token rows already gathered (and perturbed), as
// EmbedRows: for t < examples · seq,
//   hidden[t, :] = token_rows[t, :] (· project_in^T when e != h)
//                  (+ position_rows[t mod seq, :] with a position table)
//   token_rows:    [EmbedTokenRows(spec, examples, seq), e]; rows past
//                  examples · seq are not read
//   position_rows: [seq, h], the position table's rows for the tokens'
//                  positions: FirstPositionRow + k .. + seq with a prefix
//                  of k (0 without; runtime/ops/embed_plan.h picks them);
//                  nullptr for a model without a table (rotary)
//   project_in:    [h, e], or nullptr when e == h
//   workspace:     EmbedWorkspaceFloats(spec, examples, seq) elements of
//                  `type` (used: examples · seq · h when e != h and the
//                  model has positions, else none)
//   hidden:        [examples · seq, h], written
// Errors: InvalidArgument for examples or seq < 1, project_in given iff
// e == h, or position_rows given iff the model has no position table.
absl::Status EmbedRowsGpu(Gemm& gemm, ElementType type, const DecoderGpuModel& m,
                          const void* token_rows, const void* position_rows,
                          const void* project_in, int examples, int seq, void* workspace,
                          void* hidden);

// Where BlockForwardGpu reads a block's weights (device memory): each
// tensor asked for by its offset and element count in the block part, just
// before the kernel that reads it is enqueued. As for BlockWeightSource
// (runtime/nn/decoder_forward.h), a matrix need stay valid only until the
// next matrix is asked for (in stream order: a source may perturb every
// matrix into one room), a vector for the whole forward.
class GpuBlockWeightSource {
 public:
  virtual ~GpuBlockWeightSource() = default;
  virtual absl::StatusOr<const void*> Get(int64_t offset, int64_t elements) = 0;
};

// One LoRA adapter of a block on the device (models/adapters.h): the
// projection in slot `base`, y [T, out] = x [T, in] · Wᵀ, gains
// s · (x Aᵀ) Bᵀ.
struct GpuLoraAdapter {
  TensorSlot base = TensorSlot::kUnspecified;  // the adapted projection's weight
  int64_t in = 0;           // its input width
  int64_t out = 0;          // its output width
  const void* a = nullptr;  // lora_A [r, in], row-major elements of `type`, device
  const void* b = nullptr;  // lora_B [out, r], row-major elements of `type`, device
};

// A block's LoRA adapters as BlockForwardGpu applies them: the GPU twin of
// runtime/nn/block_lora.h's BlockLora. After an adapted projection's GEMM
// and before its epilogue (bias and activation, SwiGLU, the residual add),
// over the block's T = examples · seq rows:
//   u = x Aᵀ    [T, r]    (cuBLAS into the caller's scratch `u`)
//   u = s · u             (scale.h: each element rounded once to `type`,
//                          as the CPU rounds s · u apart from its GEMM)
//   y += u Bᵀ   [T, out]  (cuBLAS accumulating, LinearLayout::accumulate)
// The CPU adds a projection's bias before the adapter's term, the GPU after
// it (with the activation, bias_activation.h): the same sum in another
// order, equal to rounding like the GEMMs themselves.
struct GpuBlockLora {
  int64_t rank = 0;   // r >= 1
  float scaling = 0;  // s = α / r (models/adapters.h LoraScaling)
  std::vector<GpuLoraAdapter> adapters;  // at most one per projection

  // The adapter of the projection in `base`, or nullptr.
  const GpuLoraAdapter* Find(TensorSlot base) const;
};

// A block's prefix (prefix tuning) as BlockForwardGpu reads it: the GPU
// twin of runtime/nn/block_prefix.h's BlockPrefix, read from the block's
// (perturbed) ADAPTER_PART (models/adapters.h: keys [k, kv] then values
// [k, kv]). Every real query attends the k keys and values first (all of
// them: no mask among them), then the causal real ones; the real tokens
// sit at positions k + t (their rotary angles; their learned position rows
// are the embedding's, runtime/ops/embed_plan.h).
struct GpuBlockPrefix {
  int64_t tokens = 0;            // k >= 1
  const void* keys = nullptr;    // [k, kv] of `type`, device, as attention reads them
                                 // (after Qwen3's k-norm and the rotary embedding)
  const void* values = nullptr;  // [k, kv] of `type`, device
  // BlockPrefixScratchBytes(type, m, k, seq) of device memory, 16-byte
  // aligned, that no other op uses while the block runs (one per stream).
  void* scratch = nullptr;
};

// Bytes of GpuBlockPrefix::scratch for a prefix of `tokens` (>= 1) before
// sequences of `seq` tokens: one example's queries [k + seq, q], keys and
// values [k + seq, kv] each, in elements of `type` (attention.h
// PrefixJoinedBytes). It does not grow with the batch: attention over a
// prefix runs example by example.
int64_t BlockPrefixScratchBytes(ElementType type, const DecoderGpuModel& m, int64_t tokens,
                                int seq);

// One pre-norm decoder block of the model's family in place on the residual
// stream, as BlockForward (see the top of this file), with causal attention
// in which query i of example e attends to keys j <= i, j < lengths[e]
// (after a prefix's, with `prefix`).
// Rows at padding positions come out finite but otherwise meaningless.
//   weights:   the (perturbed) block's tensors
//   lengths:   [examples] int32, each in [1, seq]
//   hidden:    [examples · seq, h], read and written
//   workspace: BlockWorkspaceFloats(spec, examples, seq) elements of
//              `type` (runtime/nn's size, models/accounting.h). Attention
//              phase (T = examples · seq): q | k | v ([T, q], [T, kv],
//              [T, kv]; GPT-2: [T, q + 2kv] rows), then norm1(x) [T, h],
//              which once projected becomes, to the workspace's end (at
//              least T · h + seq² elements), the attention's scratch, then
//              o_proj's output; the context overwrites the queries. FFN
//              phase: norm2(x) / down's output [T, h] | inner [T, f] | up
//              [T, f] (SwiGLU)
//   rotary:    the angles of at least seq positions for a rotary model
//              (k + seq with a prefix of k); ignored (may be empty) for
//              the others
//   lora:      the block's LoRA adapters (their terms added as GpuBlockLora
//              says), or nullptr for none
//   lora_u:    with `lora`, scratch of examples · seq · lora->rank
//              elements of `type` (device; no other op may use it while
//              this one runs: one per stream); ignored without
//   prefix:    the block's prefix of k tokens (attention and positions as
//              GpuBlockPrefix says), or nullptr for none
// Errors: InvalidArgument for examples or seq < 1, a rotary model without
// a rotary table of (k +) seq positions, (with `lora`) a rank < 1, a
// missing scratch or adapter matrix, an adapter of a slot that is not one
// of the model's projections or whose widths are not that projection's,
// or (with `prefix`) k < 1, k + seq > the model's max_positions, or a
// missing array or scratch.
absl::Status BlockForwardGpu(Gemm& gemm, ElementType type, const DecoderGpuModel& m,
                             GpuBlockWeightSource& weights, const int32_t* lengths, int examples,
                             int seq, void* hidden, void* workspace, const GpuRotary& rotary,
                             const GpuBlockLora* lora = nullptr, void* lora_u = nullptr,
                             const GpuBlockPrefix* prefix = nullptr);
// The same reading the flat (perturbed, or under LoRA or a prefix frozen)
// block part in place.
absl::Status BlockForwardGpu(Gemm& gemm, ElementType type, const DecoderGpuModel& m,
                             const void* block_part, const int32_t* lengths, int examples,
                             int seq, void* hidden, void* workspace, const GpuRotary& rotary,
                             const GpuBlockLora* lora = nullptr, void* lora_u = nullptr,
                             const GpuBlockPrefix* prefix = nullptr);

// MeZO's per-example classification loss, as HeadLossFromRows: the final
// norm (LayerNorm or RMSNorm, when final_norm) of the hidden row at
// lengths[e] - 1, then project_out (when e != h), dotted with each label
// word's row; losses[e] = logsumexp(logits) - logits[labels[e]] (nats), in
// fp32. Needs no workspace (head_loss.h keeps an example's row in shared
// memory).
//   head_part:  the flat (perturbed) head part; only the tensors before an
//               untied lm_head are read (the final norm, project_out)
//   label_rows: [n_labels, e], the label words' (perturbed) rows of the LM
//               head: the untied lm_head's, or the token table's
//   hidden:     [examples · seq, h], the last block's output
//   lengths:    [examples] int32, each in [1, seq]
//   labels:     [examples] int32, each in [0, n_labels)
//   losses:     [examples] fp32, written
// Enqueued on `stream`. Errors: InvalidArgument for examples, seq or
// n_labels < 1.
absl::Status HeadLossFromRowsGpu(cudaStream_t stream, ElementType type, const DecoderGpuModel& m,
                                 const void* head_part, const void* label_rows,
                                 const void* hidden, const int32_t* lengths, int examples,
                                 int seq, int n_labels, const int32_t* labels, float* losses);

}  // namespace zosched
