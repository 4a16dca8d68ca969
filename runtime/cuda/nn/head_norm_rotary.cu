#include "runtime/cuda/nn/head_norm_rotary.h"

#include "runtime/cuda/nn/kernel_util.cuh"
#include "runtime/cuda/nn/row_math.h"
#include "runtime/cuda/nn/row_norm.cuh"

namespace zosched {
namespace {

// A LLaMA head has 64 pairs (d 128): one per thread.
constexpr int kThreads = 64;

}  // namespace

// Block (x, y): rows x, x + gridDim.x, ... of head y.
template <class T>
static __global__ void NormRotateHeadsKernel(T* x, int64_t rows, int64_t ld, int64_t d,
                                             const T* norm_w, float eps, const float* rotary,
                                             int64_t seq, int64_t first_position) {
  __shared__ float scratch[32];
  const int64_t half = d / 2;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* head = x + r * ld + blockIdx.y * d;  // [d]
    cuda_nn::RowStats stats;
    if (norm_w != nullptr) {
      // Every thread has read the head when this returns: the writes below
      // may overwrite it.
      stats = cuda_nn::BlockRowStats(NormKind::kRmsNorm, head, d, eps, scratch);
    }
    const float* cos =
        rotary != nullptr ? rotary + (first_position + r % seq) * d : nullptr;  // [half]
    for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
      const float w1 = norm_w != nullptr ? ToFloat(norm_w[i]) : 1.0f;
      const float w2 = norm_w != nullptr ? ToFloat(norm_w[i + half]) : 1.0f;
      const float c = cos != nullptr ? cos[i] : 1.0f;
      const float s = cos != nullptr ? cos[half + i] : 0.0f;
      float y1, y2;
      NormRotatePair(ToFloat(head[i]), ToFloat(head[i + half]), norm_w != nullptr, stats.rstd, w1,
                     w2, cos != nullptr, c, s, &y1, &y2);
      head[i] = FromFloat<T>(y1);
      head[i + half] = FromFloat<T>(y2);
    }
  }
}

cudaError_t NormRotateHeads(ElementType type, void* x, int64_t rows, int64_t ld, int64_t heads,
                            int64_t d, const void* norm_w, float eps, const float* rotary,
                            int64_t seq, int64_t first_position, cudaStream_t stream) {
  if (rows < 0 || heads < 1 || heads > 65535 || d < 2 || d % 2 != 0 || ld < heads * d ||
      seq < 1 || first_position < 0) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || (norm_w == nullptr && rotary == nullptr)) return cudaSuccess;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    const dim3 grid(cuda_nn::GridFor(rows, 1), static_cast<unsigned int>(heads));
    NormRotateHeadsKernel<T><<<grid, kThreads, 0, stream>>>(
        static_cast<T*>(x), rows, ld, d, static_cast<const T*>(norm_w), eps, rotary, seq,
        first_position);
    return cudaSuccess;
  });
}

}  // namespace zosched
