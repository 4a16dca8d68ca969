// SwiGLU's inner activation (LLaMA, Qwen), on the GPU: silu(gate) · up.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// gate[i] = silu(gate[i]) · up[i] for i < n, in fp32 (runtime/nn/
// element_math.h SwiGlu, the CPU's SwiGluRange per element), rounded to
// `type` on store.
//   gate: [n] of `type`, device, read and written
//   up:   [n] of `type`, device (must not overlap gate)
// Enqueued on `stream`. Returns cudaErrorInvalidValue for n < 0 or an
// unknown type, else the launch's error.
cudaError_t SwiGluInPlace(ElementType type, void* gate, const void* up, int64_t n,
                          cudaStream_t stream);

}  // namespace zosched
