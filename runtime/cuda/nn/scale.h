// Scaling in place, x *= s, on the GPU: LoRA's u = s · (x Aᵀ)
// (runtime/nn/block_lora.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// x[i] = x[i] · s for i < n, in fp32, rounded to `type` on store (for FP32
// the CPU's `u[i] *= s`, bitwise).
//   x: [n] of `type`, device
// Enqueued on `stream`. Returns cudaErrorInvalidValue for n < 0 or an
// unknown type, else the launch's error.
cudaError_t ScaleInPlace(ElementType type, void* x, float s, int64_t n, cudaStream_t stream);

}  // namespace zosched
