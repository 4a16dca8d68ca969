// Causal multi-head self-attention over a right-padded batch, on the GPU:
// cuBLAS strided-batched products on the tensor cores and one softmax pass
// per product, split to fit a given scratch (attention_plan.h says how).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/dtype/element.h"

namespace zosched {

// For each example e, head and query position i < lengths[e]:
//   s_j     = q_scale · (q[i] · k[j])          for keys j <= i, in fp32
//   p_j     = exp(s_j - max_j s_j) / Σ_j exp(s_j - max_j s_j), rounded to `type`
//   ctx[i]  = Σ_j p_j · v[j]                   accumulated in fp32
// over that head's head_dim columns (head h covers columns
// [h · head_dim, (h + 1) · head_dim) of the [rows, heads · head_dim]
// matrices; row e · seq + i is position i of example e). Context rows at
// padding positions (i >= lengths[e]) are 0 (±0: zero probabilities times
// the values); an example whose length is outside [1, seq] gets NaN context
// rows, so that the error shows in its loss. OPT scales the query after its
// bias: pass q_scale = 1 / sqrt(head_dim).
//   q_then_context: [examples · seq, heads · head_dim] of `type`, device:
//                   the queries, overwritten by the context
//   k, v:           the same shape, device (must not alias q or each other)
//   lengths:        [examples] int32, device
//   scratch:        scratch_bytes of device memory, 16-byte aligned, at
//                   least one row of fp32 scores (4 · seq rounded up to 16
//                   bytes); more lets more heads share a product (one
//                   head's scores are seq² floats)
// Deterministic: the products' shapes and the order of the steps depend on
// (examples, seq, heads, head_dim, type, scratch_bytes) only, and each
// example has products of its own, so an example's context does not depend
// on the rest of its batch (bitwise, for the same scratch_bytes and GPU).
// Enqueued on gemm.stream(). Errors: InvalidArgument for a bad shape or a
// scratch without one row of scores (before anything is enqueued); the
// cuBLAS or CUDA error of an enqueue.
absl::Status CausalAttention(Gemm& gemm, ElementType type, void* q_then_context, const void* k,
                             const void* v, const int32_t* lengths, int64_t examples, int64_t seq,
                             int64_t heads, int64_t head_dim, float q_scale, void* scratch,
                             int64_t scratch_bytes);

}  // namespace zosched
