#include "runtime/cuda/nn/kernel_util.cuh"

#include "runtime/cuda/nn/layer_norm.h"
#include "runtime/cuda/nn/row_math.h"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

template <class T>
static __global__ void LayerNormRowsKernel(const T* x, const T* w, const T* b, int64_t rows,
                                           int64_t h, T* y) {
  __shared__ float scratch[32];
  const float hf = static_cast<float>(h);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * h;  // [h]
    T* yr = y + r * h;        // [h]
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < h; i += blockDim.x) sum += ToFloat(xr[i]);
    const float mean = cuda_nn::BlockSum(sum, scratch) / hf;
    float squares = 0.0f;
    for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
      const float c = ToFloat(xr[i]) - mean;
      squares += c * c;
    }
    const float rstd = LayerNormRstd(cuda_nn::BlockSum(squares, scratch) / hf);
    // Each thread reads and writes the same elements: y may alias x.
    for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
      yr[i] =
          FromFloat<T>(LayerNormElement(ToFloat(xr[i]), mean, rstd, ToFloat(w[i]), ToFloat(b[i])));
    }
  }
}

cudaError_t LayerNormRows(ElementType type, const void* x, const void* w, const void* b,
                          int64_t rows, int64_t h, void* y, cudaStream_t stream) {
  if (rows < 0 || h < 1) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    LayerNormRowsKernel<T><<<cuda_nn::GridFor(rows, 1), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b), rows, h,
        static_cast<T*>(y));
    return cudaSuccess;
  });
}

}  // namespace zosched
