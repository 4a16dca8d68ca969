#include "runtime/cuda/nn/kernel_util.cuh"

#include "runtime/cuda/nn/scale.h"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

template <class T>
static __global__ void ScaleKernel(T* x, float s, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = FromFloat<T>(ToFloat(x[i]) * s);
  }
}

cudaError_t ScaleInPlace(ElementType type, void* x, float s, int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    ScaleKernel<T><<<cuda_nn::GridFor(n, kThreads), kThreads, 0, stream>>>(static_cast<T*>(x), s,
                                                                            n);
    return cudaSuccess;
  });
}

}  // namespace zosched
