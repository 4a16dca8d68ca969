#include "runtime/cuda/nn/embed_add.h"

#include "runtime/cuda/nn/kernel_util.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

template <class T>
static __global__ void EmbedAddKernel(const T* word, const T* position, int64_t n, int64_t seq,
                                      int64_t h, T* hidden) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t t = i / h, c = i % h;
    hidden[i] = FromFloat<T>(ToFloat(word[i]) + ToFloat(position[(t % seq) * h + c]));
  }
}

cudaError_t EmbedAdd(ElementType type, const void* word, const void* position, int64_t examples,
                     int64_t seq, int64_t h, void* hidden, cudaStream_t stream) {
  if (examples < 0 || seq < 1 || h < 1) return cudaErrorInvalidValue;
  const int64_t n = examples * seq * h;
  if (n == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    EmbedAddKernel<T><<<cuda_nn::GridFor(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(word), static_cast<const T*>(position), n, seq, h,
        static_cast<T*>(hidden));
    return cudaSuccess;
  });
}

}  // namespace zosched
