// The label-word classification head and its loss, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// MeZO's per-example classification loss (runtime/nn's HeadLossFromRows):
// for each example e, the hidden row x at its last real position
// lengths[e] - 1, then
//   x = LayerNorm(x; ln_w, ln_b)      when ln_w != nullptr (final_norm)
//   x = project_out · x               when project_out != nullptr (e_dim != h)
//   logits[l] = label_rows[l] · x     for l < n_labels
//   losses[e] = logsumexp(logits) - logits[labels[e]]   (nats)
// in fp32 (the loss from fp32 logits in double, row_math.h). One thread
// block per example with fixed-order reductions: deterministic, and an
// example's loss depends only on its own row. An example whose length is
// outside [1, seq] or whose label is outside [0, n_labels) gets a NaN loss.
//   hidden:      [examples · seq, h] of `type`, device
//   lengths:     [examples] int32, device
//   labels:      [examples] int32, device
//   ln_w, ln_b:  [h] of `type`, device, or both nullptr
//   project_out: [e_dim, h] of `type`, device, or nullptr (then e_dim == h)
//   label_rows:  [n_labels, e_dim] of `type`, device
//   losses:      [examples] fp32, device, written
// Enqueued on `stream`. Returns cudaErrorInvalidValue for examples < 0,
// seq < 1, h < 1, e_dim < 1, n_labels < 1, e_dim != h without project_out,
// ln_w and ln_b not both given or both nullptr, or an unknown type; otherwise
// the launch's error (e.g. when h + e_dim + n_labels floats exceed the
// device's shared memory per block).
cudaError_t LabelHeadLoss(ElementType type, const void* hidden, const int32_t* lengths,
                          const int32_t* labels, const void* ln_w, const void* ln_b,
                          const void* project_out, const void* label_rows, int64_t examples,
                          int64_t seq, int64_t h, int64_t e_dim, int64_t n_labels, float* losses,
                          cudaStream_t stream);

}  // namespace zosched
