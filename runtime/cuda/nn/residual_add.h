// The residual connection x += y, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// x[i] = x[i] + y[i] for i < n, in fp32, rounded to `type` on store.
//   x, y: [n] of `type`, device
// Enqueued on `stream`. Returns cudaErrorInvalidValue for n < 0 or an
// unknown type, else the launch's error.
cudaError_t ResidualAdd(ElementType type, void* x, const void* y, int64_t n, cudaStream_t stream);

}  // namespace zosched
