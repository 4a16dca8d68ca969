#include "runtime/cuda/nn/bias_activation.h"

#include "runtime/cuda/nn/kernel_util.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

template <class T>
static __global__ void BiasActivationKernel(T* y, const T* b, int64_t n, int64_t cols,
                                            PointwiseActivation activation) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    y[i] = FromFloat<T>(Activate(activation, ToFloat(y[i]) + ToFloat(b[i % cols])));
  }
}

cudaError_t BiasActivation(ElementType type, void* y, const void* b, int64_t rows, int64_t cols,
                           PointwiseActivation activation, cudaStream_t stream) {
  if (rows < 0 || cols < 1) return cudaErrorInvalidValue;
  const int64_t n = rows * cols;
  if (n == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    BiasActivationKernel<T><<<cuda_nn::GridFor(n, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(y), static_cast<const T*>(b), n, cols, activation);
    return cudaSuccess;
  });
}

}  // namespace zosched
