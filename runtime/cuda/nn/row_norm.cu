#include "runtime/cuda/nn/row_norm.h"

#include "runtime/cuda/nn/kernel_util.cuh"
#include "runtime/cuda/nn/row_norm.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

template <class T>
static __global__ void NormRowsKernel(NormKind kind, const T* x, const T* w, const T* b, float eps,
                                      int64_t rows, int64_t n, T* y) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;  // [n]
    T* yr = y + r * n;        // [n]
    const cuda_nn::RowStats stats = cuda_nn::BlockRowStats(kind, xr, n, eps, scratch);
    // Each thread reads and writes the same elements: y may alias x.
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float bias = b != nullptr ? ToFloat(b[i]) : 0.0f;
      yr[i] = FromFloat<T>(
          NormElement(kind, ToFloat(xr[i]), stats.mean, stats.rstd, ToFloat(w[i]), bias));
    }
  }
}

cudaError_t NormRows(ElementType type, NormKind kind, const void* x, const void* w, const void* b,
                     float eps, int64_t rows, int64_t n, void* y, cudaStream_t stream) {
  const bool has_bias = kind == NormKind::kLayerNorm;
  if (rows < 0 || n < 1 || kind == NormKind::kNone || w == nullptr ||
      (b != nullptr) != has_bias) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    NormRowsKernel<T><<<cuda_nn::GridFor(rows, 1), kThreads, 0, stream>>>(
        kind, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b), eps,
        rows, n, static_cast<T*>(y));
    return cudaSuccess;
  });
}

}  // namespace zosched
