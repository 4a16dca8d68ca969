// The bias add and activation that follow a Linear's GEMM, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/cuda/nn/row_math.h"
#include "runtime/dtype/element.h"

namespace zosched {

// y[r, c] = Activate(activation, y[r, c] + b[c]) for r < rows, c < cols, in
// place, in fp32 (row_math.h); without a bias, Activate(activation, y[r, c]).
//   y: [rows, cols] of `type`, device
//   b: [cols] of `type`, device, or nullptr (no bias)
// Enqueued on `stream`. Returns cudaErrorInvalidValue for rows < 0,
// cols < 1 or an unknown type, else the launch's error.
cudaError_t BiasActivation(ElementType type, void* y, const void* b, int64_t rows, int64_t cols,
                           PointwiseActivation activation, cudaStream_t stream);

}  // namespace zosched
