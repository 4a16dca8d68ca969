// Causal multi-head self-attention over a right-padded batch, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// For each example e, head and query position i < lengths[e]:
//   s_j     = (q_scale · q[i]) · k[j]          for keys j <= i
//   p_j     = exp(s_j - max_j s_j) / Σ_j exp(s_j - max_j s_j)
//   ctx[i]  = Σ_j p_j · v[j]
// over that head's head_dim columns (head h covers columns
// [h · head_dim, (h + 1) · head_dim) of the [rows, heads · head_dim]
// matrices; row e · seq + i is position i of example e). Context rows at
// padding positions (i >= lengths[e]) are 0; an example whose length is
// outside [1, seq] gets NaN context rows, so that the error shows in its
// loss. q is scaled as it is read, in fp32 (OPT scales the query after its
// bias: pass 1 / sqrt(head_dim)).
//
// One thread block per (example, head, query) with that query's scores in
// shared memory (seq floats) and fixed-order reductions: deterministic, no
// scratch in global memory, and a query's context depends only on its own
// example's rows (bitwise: not on the batch).
//   q, k, v:  [examples · seq, heads · head_dim] of `type`, device
//   lengths:  [examples] int32, device
//   context:  [examples · seq, heads · head_dim] of `type`, device, written
//             (must not alias q, k or v)
// Enqueued on `stream`. Returns cudaErrorInvalidValue for examples < 0,
// seq < 1, heads < 1, head_dim < 1 or an unknown type; otherwise the
// launch's error (e.g. when seq + head_dim floats exceed the device's shared
// memory per block).
cudaError_t CausalAttention(ElementType type, const void* q, const void* k, const void* v,
                            const int32_t* lengths, int64_t examples, int64_t seq, int64_t heads,
                            int64_t head_dim, float q_scale, void* context, cudaStream_t stream);

}  // namespace zosched
