#include "runtime/cuda/nn/embed_add.h"

#include "runtime/cuda/nn/kernel_util.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 256;

}  // namespace

// Grid y strides over rows (tokens), grid x over a row's h columns: no
// division per element.
template <class T>
static __global__ void EmbedAddKernel(const T* word, const T* position, int64_t rows, int64_t seq,
                                      int64_t h, T* hidden) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const T* word_row = word + r * h;
    const T* position_row = position + (r % seq) * h;
    T* out = hidden + r * h;
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < h;
         c += stride) {
      out[c] = FromFloat<T>(ToFloat(word_row[c]) + ToFloat(position_row[c]));
    }
  }
}

cudaError_t EmbedAdd(ElementType type, const void* word, const void* position, int64_t examples,
                     int64_t seq, int64_t h, void* hidden, cudaStream_t stream) {
  if (examples < 0 || seq < 1 || h < 1) return cudaErrorInvalidValue;
  const int64_t rows = examples * seq;
  if (rows == 0) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    const dim3 grid(cuda_nn::GridFor(h, kThreads), cuda_nn::RowBlocks(rows));
    EmbedAddKernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(word),
                                                     static_cast<const T*>(position), rows, seq, h,
                                                     static_cast<T*>(hidden));
    return cudaSuccess;
  });
}

}  // namespace zosched
