// LayerNorm over the rows of a row-major matrix, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// y[r, :] = (x[r, :] - mean) · rstd · w + b for each row r < rows of h
// columns, with the row's mean and biased variance in fp32 and
// rstd = 1 / sqrt(var + 1e-5) (row_math.h). One thread block per row with
// fixed-order reductions: deterministic, and a row's result depends only on
// that row.
//   x, y: [rows, h] of `type`, device; y may alias x
//   w, b: [h] of `type`, device
// Enqueued on `stream`. Returns cudaErrorInvalidValue for rows < 0, h < 1 or
// an unknown type, else the launch's error.
cudaError_t LayerNormRows(ElementType type, const void* x, const void* w, const void* b,
                          int64_t rows, int64_t h, void* y, cudaStream_t stream);

}  // namespace zosched
