// The softmax pass of the GPU's causal attention (attention_plan.h's
// SoftmaxPass), in place: fp32 scores in, probabilities of the element type
// out, in the same bytes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// For g < heads and r < rows, the row of `keys` fp32 scores at
//   scores + g · head_stride + r · ld          (floats)
// becomes, from the same address, `keys` probabilities of `type`. The
// score columns are `prefix` keys every query sees (prefix tuning; 0
// without), then the keys of an example of `seq` positions whose length is
// lengths[example] (device memory); row r is row i = first_row + r of that
// layout (row_math.h CausalVisibleKeys): the query at position t = i -
// prefix, which attends the first i + 1 keys (the prefix and positions j
// <= t):
//   P[j] = exp(S[j] - m) · (1 / Σ_{j' <= i} exp(S[j'] - m)),  m = max_{j<=i} S[j]
// in fp32, rounded once to `type`; P[j] = 0 for i < j < keys. A row that is
// no query (i < prefix, or padding: t >= length) is all 0; every row of an
// example whose length is outside [1, seq] is NaN. One thread block per
// row, the row staged in shared memory (keys floats) and reduced in a fixed
// order: deterministic.
// Enqueued on `stream`. Returns cudaErrorInvalidValue for rows, keys, heads
// or seq < 1, example, prefix or first_row < 0, ld < keys, first_row + rows
// > keys, keys > prefix + seq, heads > 65535, matrices that overlap
// (head_stride < rows · ld with heads > 1), or an unknown type; otherwise
// the launch's error.
cudaError_t CausalSoftmaxRows(ElementType type, float* scores, const int32_t* lengths,
                              int64_t example, int64_t seq, int64_t prefix, int64_t first_row,
                              int64_t rows, int64_t keys, int64_t ld, int64_t heads,
                              int64_t head_stride, cudaStream_t stream);

}  // namespace zosched
