// The row norms of the decoder blocks (LayerNorm for OPT and GPT-2, RMSNorm
// for LLaMA and Qwen) over the rows of a row-major matrix, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/cuda/nn/row_math.h"
#include "runtime/dtype/element.h"

namespace zosched {

// y[r, :] = the norm of x[r, :] for each row r < rows of n columns, in fp32
// (row_math.h NormElement; statistics as row_norm.cuh), rounded to `type`:
//   kLayerNorm: (x - mean) · rstd · w + b, rstd = 1 / sqrt(var + eps),
//               biased variance (torch.nn.LayerNorm)
//   kRmsNorm:   x · rstd · w, rstd = 1 / sqrt(mean(x²) + eps) (LlamaRMSNorm)
// One thread block per row with fixed-order reductions: deterministic, and
// a row's result depends only on that row.
//   x, y: [rows, n] of `type`, device; y may alias x
//   w:    [n] of `type`, device
//   b:    [n] of `type`, device, for kLayerNorm; nullptr for kRmsNorm
//   eps:  the model's NormEps (models/model_spec.h)
// Enqueued on `stream`. Returns cudaErrorInvalidValue for rows < 0, n < 1,
// kind kNone, w null, b given iff not kLayerNorm, or an unknown type; else
// the launch's error.
cudaError_t NormRows(ElementType type, NormKind kind, const void* x, const void* w, const void* b,
                     float eps, int64_t rows, int64_t n, void* y, cudaStream_t stream);

}  // namespace zosched
