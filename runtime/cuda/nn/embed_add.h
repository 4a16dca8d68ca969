// The sum of token and position embeddings, on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// hidden[t, :] = word[t, :] + position[t mod seq, :] for t < examples · seq
// (token t of example e is row e · seq + t mod seq), in fp32, rounded to
// `type` on store.
//   word:     [examples · seq, h] of `type`, device
//   position: [seq, h] of `type`, device
//   hidden:   [examples · seq, h] of `type`, device, written
// Enqueued on `stream`. Returns cudaErrorInvalidValue for examples < 0,
// seq < 1, h < 1 or an unknown type, else the launch's error.
cudaError_t EmbedAdd(ElementType type, const void* word, const void* position, int64_t examples,
                     int64_t seq, int64_t h, void* hidden, cudaStream_t stream);

}  // namespace zosched
