#include "runtime/cuda/nn/bias_activation.h"

#include "runtime/cuda/nn/kernel_util.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

// Grid y strides over rows, grid x over a row's columns: no division per
// element.
template <class T>
static __global__ void BiasActivationKernel(T* y, const T* b, int64_t rows, int64_t cols,
                                            PointwiseActivation activation) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    T* row = y + r * cols;
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
         c += stride) {
      const float x = b != nullptr ? ToFloat(row[c]) + ToFloat(b[c]) : ToFloat(row[c]);
      row[c] = FromFloat<T>(Activate(activation, x));
    }
  }
}

cudaError_t BiasActivation(ElementType type, void* y, const void* b, int64_t rows, int64_t cols,
                           PointwiseActivation activation, cudaStream_t stream) {
  if (rows < 0 || cols < 1) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    const dim3 grid(cuda_nn::GridFor(cols, kThreads), cuda_nn::RowBlocks(rows));
    BiasActivationKernel<T><<<grid, kThreads, 0, stream>>>(
        static_cast<T*>(y), static_cast<const T*>(b), rows, cols, activation);
    return cudaSuccess;
  });
}

}  // namespace zosched
