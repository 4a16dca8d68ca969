#include "runtime/cuda/nn/swiglu.h"

#include "runtime/cuda/nn/kernel_util.cuh"
#include "runtime/nn/element_math.h"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

template <class T>
static __global__ void SwiGluKernel(T* gate, const T* up, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    gate[i] = FromFloat<T>(SwiGlu(ToFloat(gate[i]), ToFloat(up[i])));
  }
}

cudaError_t SwiGluInPlace(ElementType type, void* gate, const void* up, int64_t n,
                          cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    SwiGluKernel<T><<<cuda_nn::GridFor(n, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(gate), static_cast<const T*>(up), n);
    return cudaSuccess;
  });
}

}  // namespace zosched
