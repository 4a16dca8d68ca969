// How the GPU's causal attention (runtime/cuda/nn/attention.h) splits a batch into cuBLAS
// products and softmax passes that fit its scratch: host arithmetic only,
// so that the CPU tests check every offset, leading dimension and stride
// by running the steps with a reference GEMM (runtime/cuda/nn/attention_plan_test.cc).
//
// The buffers, row-major with row e · seq + i for position i of example e,
// of the compute type T except the scratch:
//   kQuery:   [examples · seq rows, q_ld], head h at columns
//             [h · head_dim, (h + 1) · head_dim); each head's context
//             overwrites its own queries, chunk by chunk, once the chunk's
//             scores no longer need them (the other columns are untouched)
//   kKey, kValue: [examples · seq rows, kv_ld], key/value head g at columns
//             [g · head_dim, (g + 1) · head_dim)
//   kScratch: `scratch_bytes` of device memory holding one call's scores,
//             fp32, then its probabilities, T, in place
// Grouped-query attention: query head h reads key/value head h / group,
// group = heads / kv_heads (1: multi-head attention). A call batches query
// heads j + g · group for a run of key/value heads g (j < group): in the
// strided batch, query heads are group · head_dim columns apart and their
// key/value heads head_dim apart.
// For each example, each j, each run of key/value heads and each chunk of
// query rows [r0, r1) (keys 0 .. r1 - 1 are the only ones those rows see):
//   1. scores  S = q_scale · Q[r0:r1] · K[0:r1]ᵀ, per head, fp32
//   2. softmax P = causal softmax of S's rows (SoftmaxPass), T, in place
//   3. context Q[r0:r1] = P · V[0:r1], per head
// The steps depend on the shape (AttentionShape) alone, never on the
// values, so an example's products have the same shapes whatever the rest
// of its batch holds.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace zosched {

enum class AttentionBuffer : int { kQuery, kKey, kValue, kScratch };

// Matrix g of a strided batch: `bytes` past its buffer's start for g = 0,
// then `stride` elements further for each g; columns `ld` elements apart
// (column-major, cuBLAS's convention). Elements are of the operand's type.
struct StridedOperand {
  AttentionBuffer buffer = AttentionBuffer::kScratch;
  int64_t bytes = 0;
  int64_t ld = 0;
  int64_t stride = 0;
};

// For g < batch, column-major: C_g [m x n] = alpha · op(A_g) · B_g, with
// op(A_g) = A_gᵀ [k x m stored] when transpose_a, else A_g [m x k]; B_g is
// [k x n]. A and B hold T; C holds fp32 when c_fp32, else T. Accumulated in
// fp32; C is overwritten.
struct AttentionProduct {
  bool transpose_a = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  StridedOperand a, b, c;
  bool c_fp32 = false;
  int64_t batch = 0;
};

// Causal softmax of `heads` score matrices in the scratch, each `rows` rows
// of `keys` fp32 scores, rows `ld` floats apart, matrices `head_stride`
// floats apart, the first starting `bytes` into the scratch. Row r is query
// position i = first_row + r of example `example`, whose length is
// lengths[example] (device memory). Each row becomes, in the same bytes,
// `keys` probabilities of type T:
//   P[j] = exp(S[j] - m) / Σ_{j' <= i} exp(S[j'] - m),  m = max_{j <= i} S[j]
// for j <= i, and 0 for j > i; a row at padding (i >= length) is all 0 (so
// its context is 0), and every row of an example whose length is outside
// [1, seq] is NaN (so the error shows in its loss).
struct SoftmaxPass {
  int64_t example = 0;
  int64_t first_row = 0;
  int64_t rows = 0;
  int64_t keys = 0;
  int64_t ld = 0;
  int64_t heads = 0;
  int64_t head_stride = 0;
  int64_t bytes = 0;
};

struct AttentionShape {
  int64_t examples = 0;
  int64_t seq = 0;
  int64_t heads = 0;     // query heads
  int64_t kv_heads = 0;  // key/value heads: divides heads
  int64_t head_dim = 0;
  int64_t q_ld = 0;      // elements per row of kQuery: >= heads · head_dim
  int64_t kv_ld = 0;     // elements per row of kKey and kValue: >= kv_heads · head_dim
  int element_bytes = 4;  // sizeof(T): 4, or 2 for FP16 and BF16
  float q_scale = 1.0f;   // 1 / sqrt(head_dim)
  int64_t scratch_bytes = 0;
};

// How many heads one product batches (at most kv_heads: one per key/value
// head) and how many query rows a chunk has.
// Rows of scores are padded to a multiple of 4 floats, so that every row of
// P starts 16-byte aligned for the tensor cores.
struct AttentionTiling {
  int64_t heads_per_call = 0;
  int64_t rows_per_chunk = 0;
};

// Whole heads (every query row at once) when one head's scores fit the
// scratch, as many as fit (at most kv_heads); otherwise one head at a time
// in chunks of as many query rows as fit. Errors: InvalidArgument for a
// dimension < 1, kv_heads not dividing heads, a row stride shorter than its
// heads, element_bytes not 2 or 4, or a scratch smaller than one row of
// scores (4 · RoundUp(seq, 4) bytes), naming what would be enough.
absl::StatusOr<AttentionTiling> PlanAttentionTiling(const AttentionShape& shape);

// Receives the steps in the order they must run.
class AttentionSteps {
 public:
  virtual ~AttentionSteps() = default;
  virtual absl::Status Product(const AttentionProduct& product) = 0;
  virtual absl::Status Softmax(const SoftmaxPass& pass) = 0;
};

// Plans the tiling and hands `steps` every step of the batch in order
// (scores, softmax, context per chunk). Stops at the first error: the
// tiling's, or the one a step returns.
absl::Status ForEachAttentionStep(const AttentionShape& shape, AttentionSteps& steps);

// Attention over a prefix of `tokens` (k >= 1) keys and values that every
// query sees first (prefix tuning; runtime/cuda/nn/attention.h's
// AttentionPrefix) runs each example of `shape` as a batch of its own, of
// this shape: one example, seq k + shape.seq, rows dense (q_ld heads ·
// head_dim, kv_ld kv_heads · head_dim), the rest of `shape` (its scratch
// included) as it is. Its buffers are the example's rows joined behind k
// rows (runtime/cuda/nn/prefix_join.h): the queries behind k zero rows, the
// keys and values behind the prefix's. Its steps are then those above over
// all k + seq rows, the k zero query rows included; the softmax's receiver
// masks by the prefix (runtime/cuda/nn/causal_softmax.h: row i < k is no
// query, row i >= k is position i - k and sees keys 0 .. i), and rows k ..
// k + seq of the queries end as the example's context.
AttentionShape PrefixJoinedShape(const AttentionShape& shape, int64_t tokens);

}  // namespace zosched
