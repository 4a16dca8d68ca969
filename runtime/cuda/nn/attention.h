// Causal multi-head (and grouped-query) self-attention over a right-padded
// batch, on the GPU: cuBLAS strided-batched products on the tensor cores
// and one softmax pass per product, split to fit a given scratch
// (attention_plan.h says how); optionally over a prefix of keys and values
// that every query sees first (prefix tuning, runtime/nn/block_prefix.h).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "kernel_plans/attention_plan.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/dtype/element.h"

namespace zosched {

// A prefix of keys and values that every query attends before its
// example's own (prefix tuning: runtime/nn/block_prefix.h, the keys as
// attention reads them).
struct AttentionPrefix {
  int64_t tokens = 0;            // k >= 1
  const void* keys = nullptr;    // [k, kv_heads · head_dim] of `type`, device
  const void* values = nullptr;  // [k, kv_heads · head_dim] of `type`, device
  // PrefixJoinedBytes(shape, k) of device memory, 16-byte aligned, that no
  // other op uses meanwhile (one per stream).
  void* joined = nullptr;
};

// For each example e, query head h and query position i < lengths[e]
// (shape: attention_plan.h's AttentionShape; key/value head g = h / (heads
// / kv_heads)):
//   s_j     = q_scale · (q[i] · k[j])          for keys j <= i, in fp32
//   p_j     = exp(s_j - max_j s_j) / Σ_j exp(s_j - max_j s_j), rounded to `type`
//   ctx[i]  = Σ_j p_j · v[j]                   accumulated in fp32
// over head_dim columns (query head h covers columns [h · head_dim,
// (h + 1) · head_dim) of the query rows, key/value head g the same of the
// key and value rows; row e · seq + i is position i of example e). Context
// rows at padding positions (i >= lengths[e]) are 0 (±0: zero
// probabilities times the values); an example whose length is outside
// [1, seq] gets NaN context rows, so that the error shows in its loss.
// q_scale is 1 / sqrt(head_dim) (runtime/nn scales the queries after their
// bias and rotary embedding).
//   q_then_context: [examples · seq, shape.q_ld] of `type`, device: the
//                   queries, overwritten by the context (columns past
//                   heads · head_dim untouched)
//   k, v:           [examples · seq, shape.kv_ld] each, device (may lie in
//                   the query rows' other columns, e.g. GPT-2's fused
//                   q | k | v, but must not overlap the queries)
//   lengths:        [examples] int32, device
//   scratch:        shape.scratch_bytes of device memory, 16-byte aligned,
//                   at least one row of fp32 scores (4 · seq rounded up to
//                   16 bytes; with a prefix, 4 · (k + seq)); more lets more
//                   heads share a product (one head's scores are seq², with
//                   a prefix (k + seq)², floats)
//   prefix:         nullptr, or a prefix of k keys and values: the keys of
//                   query i are then the prefix's k (of key/value head g,
//                   the columns above), then its example's j <= i:
//                     s      = q_scale · q[i] · [pk[0 .. k); k[0 .. i]]
//                     ctx[i] = Σ softmax(s) · [pv[0 .. k); v[0 .. i]]
//                   over k + i + 1 scores. Each example is then a plan of
//                   its own (examples 1, seq k + shape.seq): its queries,
//                   behind k zero rows, and its keys and values, behind the
//                   prefix's, are copied into prefix->joined
//                   (prefix_join.h), and its context copied back from there
// Deterministic: the products' shapes and the order of the steps depend on
// the shape (and k) only, and each example has products of its own, so an
// example's context does not depend on the rest of its batch (bitwise, for
// the same scratch_bytes and GPU).
// Enqueued on gemm.stream(). Errors: InvalidArgument for a bad shape
// (PlanAttentionTiling), shape.element_bytes other than `type`'s, a
// scratch without one row of scores, or a prefix with tokens < 1 or a null
// array (before anything is enqueued); the cuBLAS or CUDA error of an
// enqueue.
absl::Status CausalAttention(Gemm& gemm, ElementType type, const AttentionShape& shape,
                             void* q_then_context, const void* k, const void* v,
                             const int32_t* lengths, void* scratch,
                             const AttentionPrefix* prefix = nullptr);

// Bytes of AttentionPrefix::joined for `shape` (its seq, heads, kv_heads,
// head_dim and element_bytes) and a prefix of `tokens` (>= 1): one
// example's queries [tokens + seq, heads · head_dim], then its keys and its
// values [tokens + seq, kv_heads · head_dim] each, each array 16-byte
// aligned.
int64_t PrefixJoinedBytes(const AttentionShape& shape, int64_t tokens);

}  // namespace zosched
