// Casting a buffer between the compute dtypes on the GPU (the CAST compute
// op: wire dtype <-> compute dtype), bitwise what the CPU does
// (runtime/dtype/convert.h ConvertBuffer): every element goes through fp32,
// widening exactly and narrowing to nearest even, NaNs kept NaN
// (half_convert.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// dst[i] = FromFloat<To>(ToFloat(src[i])) for i in [0, n), with From and To
// the storage types of `from` and `to`. from == to copies the bytes
// (cudaMemcpyAsync device to device; nothing when src == dst).
//   src  device, n elements of `from`, aligned to its element size.
//   dst  device, n elements of `to`, aligned to its element size; must not
//        overlap src unless from == to and dst == src.
//   n    elements (>= 0).
// Only enqueues on `stream`. Returns cudaErrorInvalidValue (nothing
// enqueued) for n < 0 or an unknown type; cudaSuccess for n == 0 (nothing
// enqueued); otherwise the cudaMemcpyAsync result or cudaGetLastError()
// after the launch.
cudaError_t LaunchCast(ElementType from, const void* src, ElementType to, void* dst, int64_t n,
                       cudaStream_t stream);

}  // namespace zosched
