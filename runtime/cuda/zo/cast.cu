// LaunchCast (cast.h).
#include "runtime/cuda/zo/cast.h"

#include "runtime/cuda/zo/launch_grid.h"
#include "runtime/dtype/element.h"

namespace zosched {
namespace {

using zo_grid::Blocks;
using zo_grid::kThreads;

bool Valid(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF16 || t == ElementType::kBF16;
}

}  // namespace

// dst[i] = FromFloat<To>(ToFloat(src[i])) for i in [0, n).
template <class From, class To>
static __global__ void CastKernel(const From* src, To* dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    dst[i] = FromFloat<To>(ToFloat(src[i]));
  }
}

template <class From, class To>
static cudaError_t CastAs(const void* src, void* dst, int64_t n, cudaStream_t stream) {
  CastKernel<From, To>
      <<<Blocks(n), kThreads, 0, stream>>>(static_cast<const From*>(src), static_cast<To*>(dst), n);
  return cudaGetLastError();
}

// from != to here.
template <class From>
static cudaError_t CastFrom(const void* src, ElementType to, void* dst, int64_t n,
                            cudaStream_t stream) {
  switch (to) {
    case ElementType::kF32:
      return CastAs<From, float>(src, dst, n, stream);
    case ElementType::kF16:
      return CastAs<From, Half>(src, dst, n, stream);
    case ElementType::kBF16:
      return CastAs<From, BFloat16>(src, dst, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchCast(ElementType from, const void* src, ElementType to, void* dst, int64_t n,
                       cudaStream_t stream) {
  if (n < 0 || !Valid(from) || !Valid(to)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (from == to) {
    if (src == dst) return cudaSuccess;
    return cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * ElementBytes(from),
                           cudaMemcpyDeviceToDevice, stream);
  }
  switch (from) {
    case ElementType::kF32:
      return CastFrom<float>(src, to, dst, n, stream);
    case ElementType::kF16:
      return CastFrom<Half>(src, to, dst, n, stream);
    case ElementType::kBF16:
      return CastFrom<BFloat16>(src, to, dst, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace zosched
