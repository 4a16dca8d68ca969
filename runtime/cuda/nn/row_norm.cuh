// The statistics of one normed row, reduced by a whole thread block (nvcc
// only; included by .cu files): what row_norm.cu's rows, head_loss.cu's
// final norm and head_norm_rotary.cu's QK-norm feed to row_math.h's
// per-element functions.
#pragma once

#include <cstdint>

#include "runtime/cuda/nn/kernel_util.cuh"
#include "runtime/cuda/nn/row_math.h"
#include "runtime/dtype/element.h"

namespace zosched {
namespace cuda_nn {

struct RowStats {
  float mean = 0.0f;  // kLayerNorm: the row's mean; else 0
  float rstd = 1.0f;  // LayerNormRstd of the biased variance, or RmsNormRstd
                      // of the mean square; 1 for kNone
};

// The statistics of x[0 .. n) for a norm of `kind` with epsilon `eps`, in
// fp32: LayerNorm's mean, then the mean of squared deviations (two passes,
// as runtime/nn); RMSNorm's mean of squares. Each thread sums its strided
// elements, then BlockSum reduces in a fixed order: deterministic, and every
// thread gets the same bits. Call from every thread of the block (blockDim.x
// a multiple of 32); `scratch` is BlockSum's 32 floats of shared memory. On
// return every thread has finished reading x (BlockSum synchronises), so
// the caller may overwrite the row in place.
template <class T>
__device__ inline RowStats BlockRowStats(NormKind kind, const T* x, int64_t n, float eps,
                                         float* scratch) {
  RowStats stats;
  const float nf = static_cast<float>(n);
  if (kind == NormKind::kLayerNorm) {
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += ToFloat(x[i]);
    stats.mean = BlockSum(sum, scratch) / nf;
    float squares = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float c = ToFloat(x[i]) - stats.mean;
      squares += c * c;
    }
    stats.rstd = LayerNormRstd(BlockSum(squares, scratch) / nf, eps);
  } else if (kind == NormKind::kRmsNorm) {
    float squares = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float v = ToFloat(x[i]);
      squares += v * v;
    }
    stats.rstd = RmsNormRstd(BlockSum(squares, scratch) / nf, eps);
  }
  return stats;
}

}  // namespace cuda_nn
}  // namespace zosched
