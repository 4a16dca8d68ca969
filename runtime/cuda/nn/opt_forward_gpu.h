// The OPT decoder forward pass on the GPU: the CUDA backend's counterpart of
// runtime/nn/decoder_forward.h (EmbedRows, BlockForward, HeadLossFromRows), with
// the same inputs, shapes and workspace sizes, so that the memory plan made
// from runtime/nn's workspace formulas holds for both backends.
//
// Shapes as in opt_forward.h: `examples` sequences of `seq` tokens, padded
// on the right; lengths[e] in [1, seq]; activations row-major
// [examples · seq, h] (token t of example e is row e · seq + t); h =
// hidden_size, f = ffn_size, e = EmbedDim, d = h / num_heads. Every pointer
// is device memory; every array except lengths, labels (int32) and losses
// (fp32) holds elements of `type` (FP32, FP16 or BF16), parameter parts
// included, laid out as in runtime/nn/param_layout.h.
//
// Numerics: storage in `type`, arithmetic in fp32 (projections: cuBLAS with
// fp32 accumulation, gemm.h); each stored intermediate (normed rows, q, k,
// v, context, projections, FFN activations, the residual stream) is rounded
// to `type`. LayerNorm eps 1e-5, biased variance; softmax with max
// subtraction; loss as the CPU's (row_math.h). Agrees with the CPU to
// rounding, not bitwise: the summation orders differ (the tolerances are
// stated in opt_forward_gpu_test.cc).
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

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/dtype/element.h"

namespace zosched {

// The dimensions of an OPT model and the offsets (in elements, from the
// part's start) of the tensors of its block and head parts
// (runtime/nn/param_layout.h). Computed once per schedule.
struct OptGpuModel {
  int64_t h = 0;         // hidden_size
  int64_t f = 0;         // ffn_size
  int64_t e = 0;         // EmbedDim: word_embed_proj_dim, or h
  int64_t heads = 0;     // num_heads
  int64_t head_dim = 0;  // h / heads
  int64_t vocab = 0;     // vocab_size
  bool final_norm = false;

  // In a block part (every block has the same layout):
  int64_t ln1_w = 0, ln1_b = 0;  // self_attn_layer_norm [h]
  int64_t q_w = 0, q_b = 0;      // self_attn.q_proj [h, h], [h]
  int64_t k_w = 0, k_b = 0;      // self_attn.k_proj [h, h], [h]
  int64_t v_w = 0, v_b = 0;      // self_attn.v_proj [h, h], [h]
  int64_t o_w = 0, o_b = 0;      // self_attn.out_proj [h, h], [h]
  int64_t ln2_w = 0, ln2_b = 0;  // final_layer_norm (the FFN's norm) [h]
  int64_t fc1_w = 0, fc1_b = 0;  // fc1 [f, h], [f]
  int64_t fc2_w = 0, fc2_b = 0;  // fc2 [h, f], [h]
  // In the head part, -1 when absent:
  int64_t head_ln_w = -1, head_ln_b = -1;  // final_layer_norm [h] (final_norm)
  int64_t project_out = -1;                // project_out [e, h] (e != h)

  // Errors: InvalidArgument from CheckRuntimeSupports (runtime/nn/
  // opt_forward.h) when the GPU forward cannot run `spec`: the same models
  // as the CPU's.
  static absl::StatusOr<OptGpuModel> From(const ModelSpec& spec);
};

// The embedding from token rows already gathered (and perturbed), as
// EmbedRows:
//   hidden[t, :] = token_rows[t, :] (· project_in^T when e != h)
//                  + position_rows[t mod seq, :]          for t < examples · seq
//   token_rows:    [EmbedTokenRows(spec, examples, seq), e]; rows past
//                  examples · seq are not read
//   position_rows: [seq, h], the position table's rows 2 .. seq + 1
//   project_in:    [h, e], or nullptr when e == h
//   workspace:     EmbedWorkspaceFloats(spec, examples, seq) elements of
//                  `type` (used: examples · seq · h when e != h, else none)
//   hidden:        [examples · seq, h], written
// Errors: InvalidArgument for examples or seq < 1, or project_in given iff
// e == h.
absl::Status OptEmbedRowsGpu(Gemm& gemm, ElementType type, const OptGpuModel& m,
                             const void* token_rows, const void* position_rows,
                             const void* project_in, int examples, int seq, void* workspace,
                             void* hidden);

// Where OptBlockForwardGpu reads a block's weights (device memory): each
// tensor asked for by its offset and element count in the block part, just
// before the kernel that reads it is enqueued. As for BlockWeightSource
// (runtime/nn/decoder_forward.h), a matrix need stay valid only until the next
// matrix is asked for (in stream order: a source may perturb every matrix
// into one room), a vector for the whole forward.
class GpuBlockWeightSource {
 public:
  virtual ~GpuBlockWeightSource() = default;
  virtual absl::StatusOr<const void*> Get(int64_t offset, int64_t elements) = 0;
};

// One pre-LN OPT decoder block in place on the residual stream, as
// BlockForward:
//   x = x + out_proj(attention(LN1(x)))
//   x = x + fc2(relu(fc1(LN2(x))))
// with causal multi-head attention (attention.h) in which query i of
// example e attends to keys j <= i, j < lengths[e]. Rows at padding
// positions come out finite but otherwise meaningless.
//   block_part: the flat (perturbed) block part
//   lengths:    [examples] int32, each in [1, seq]
//   hidden:     [examples · seq, h], read and written
//   workspace:  BlockWorkspaceFloats(spec, examples, seq) elements of
//               `type` (used: 4 · examples · seq · h for LN1(x) / context,
//               q / out_proj output, k, v; then examples · seq · (h + f) for
//               LN2(x) / fc2 output and the FFN's inner activations)
// Errors: InvalidArgument for examples or seq < 1.
absl::Status OptBlockForwardGpu(Gemm& gemm, ElementType type, const OptGpuModel& m,
                                const void* block_part, const int32_t* lengths, int examples,
                                int seq, void* hidden, void* workspace);
// The same with the weights from `weights`.
absl::Status OptBlockForwardGpu(Gemm& gemm, ElementType type, const OptGpuModel& m,
                                GpuBlockWeightSource& weights, const int32_t* lengths,
                                int examples, int seq, void* hidden, void* workspace);

// MeZO's per-example classification loss, as HeadLossFromRows: the final
// LayerNorm (when final_norm) of the hidden row at lengths[e] - 1, then
// project_out (when e != h), dotted with each label word's row; losses[e] =
// logsumexp(logits) - logits[labels[e]] (nats), in fp32. Needs no
// workspace (head_loss.h keeps an example's row in shared memory).
//   head_part:  the flat (perturbed) head part
//   label_rows: [n_labels, e], the label words' (perturbed) rows of
//               embed_tokens
//   hidden:     [examples · seq, h], the last block's output
//   lengths:    [examples] int32, each in [1, seq]
//   labels:     [examples] int32, each in [0, n_labels)
//   losses:     [examples] fp32, written
// Enqueued on `stream`. Errors: InvalidArgument for examples, seq or
// n_labels < 1.
absl::Status OptHeadLossGpu(cudaStream_t stream, ElementType type, const OptGpuModel& m,
                            const void* head_part, const void* label_rows, const void* hidden,
                            const int32_t* lengths, int examples, int seq, int n_labels,
                            const int32_t* labels, float* losses);

}  // namespace zosched
