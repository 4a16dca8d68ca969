// The label-word classification head and its loss, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/cuda/nn/row_math.h"
#include "runtime/dtype/element.h"

namespace zosched {

// The final norm before the head (the model's final_norm, or none).
struct HeadNorm {
  NormKind kind = NormKind::kNone;
  const void* w = nullptr;  // [h] of the element type, device (kLayerNorm, kRmsNorm)
  const void* b = nullptr;  // [h] of the element type, device (kLayerNorm only)
  float eps = 0.0f;         // the model's NormEps
};

// MeZO's per-example classification loss (runtime/nn's HeadLossFromRows):
// for each example e, the hidden row x at its last real position
// lengths[e] - 1, then
//   x = norm(x)                       the final LayerNorm or RMSNorm, if any
//   x = project_out · x               when project_out != nullptr (e_dim != h)
//   logits[l] = label_rows[l] · x     for l < n_labels
//   losses[e] = logsumexp(logits) - logits[labels[e]]   (nats)
// in fp32 (the norm as NormRows, row_norm.h; the loss from fp32 logits in
// double, row_math.h). One thread block per example with fixed-order
// reductions: deterministic, and an example's loss depends only on its own
// row. An example whose length is outside [1, seq] or whose label is
// outside [0, n_labels) gets a NaN loss.
//   hidden:      [examples · seq, h] of `type`, device
//   lengths:     [examples] int32, device
//   labels:      [examples] int32, device
//   project_out: [e_dim, h] of `type`, device, or nullptr (then e_dim == h)
//   label_rows:  [n_labels, e_dim] of `type`, device: the label words' rows
//                of the LM head (the untied lm_head, or the token table)
//   losses:      [examples] fp32, device, written
// Enqueued on `stream`. Returns cudaErrorInvalidValue for examples < 0,
// seq < 1, h < 1, e_dim < 1, n_labels < 1, e_dim != h without project_out,
// a norm whose weights do not fit its kind (w iff a norm, b iff LayerNorm),
// or an unknown type; otherwise the launch's error (e.g. when h + e_dim +
// n_labels floats exceed the device's shared memory per block).
cudaError_t LabelHeadLoss(ElementType type, const void* hidden, const int32_t* lengths,
                          const int32_t* labels, const HeadNorm& norm, const void* project_out,
                          const void* label_rows, int64_t examples, int64_t seq, int64_t h,
                          int64_t e_dim, int64_t n_labels, float* losses, cudaStream_t stream);

}  // namespace zosched
