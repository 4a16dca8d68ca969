#include "runtime/cuda/nn/head_loss.h"

#include "runtime/cuda/nn/kernel_util.cuh"
#include "runtime/cuda/nn/row_math.h"
#include "runtime/cuda/nn/row_norm.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

}  // namespace

// out[r] = rows[r, :] · x for r < n (rows [n, width] of T, x [width] fp32 in
// shared memory): warp w takes rows w, w + kWarps, ...; its lanes split the
// dot product and reduce it in a fixed order.
template <class T>
static __device__ void RowDots(const T* rows, int64_t n, int64_t width, const float* x,
                               float* out) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t r = warp; r < n; r += kWarps) {
    const T* row = rows + r * width;
    float dot = 0.0f;
    for (int64_t c = lane; c < width; c += 32) dot += ToFloat(row[c]) * x[c];
    dot = cuda_nn::WarpSum(dot);
    if (lane == 0) out[r] = dot;
  }
}

// Dynamic shared memory (fp32): the normed row [h], the projected row
// [e_dim] when there is a projection, the logits [n_labels].
template <class T>
static __global__ void HeadLossKernel(const T* hidden, const int32_t* lengths,
                                      const int32_t* labels, NormKind norm, const T* norm_w,
                                      const T* norm_b, float eps, const T* project_out,
                                      const T* label_rows, int64_t examples, int64_t seq,
                                      int64_t h, int64_t e_dim, int64_t n_labels, float* losses) {
  extern __shared__ float shared[];
  float* normed = shared;                                            // [h]
  float* projected = normed + h;                                     // [e_dim] or none
  float* logits = projected + (project_out != nullptr ? e_dim : 0);  // [n_labels]
  __shared__ float scratch[32];
  for (int64_t ex = blockIdx.x; ex < examples; ex += gridDim.x) {
    const int32_t length = lengths[ex];
    const int32_t label = labels[ex];
    if (length < 1 || length > seq || label < 0 || label >= n_labels) {
      if (threadIdx.x == 0) losses[ex] = NAN;
      continue;  // the whole block takes this branch
    }
    __syncthreads();  // the previous example's readers of shared memory are done
    const T* x = hidden + (ex * seq + length - 1) * h;  // [h]
    const cuda_nn::RowStats stats = cuda_nn::BlockRowStats(norm, x, h, eps, scratch);
    for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
      const float w = norm_w != nullptr ? ToFloat(norm_w[i]) : 1.0f;
      const float b = norm_b != nullptr ? ToFloat(norm_b[i]) : 0.0f;
      normed[i] = NormElement(norm, ToFloat(x[i]), stats.mean, stats.rstd, w, b);
    }
    __syncthreads();
    const float* features = normed;  // [e_dim]
    if (project_out != nullptr) {
      RowDots(project_out, e_dim, h, normed, projected);
      __syncthreads();
      features = projected;
    }
    RowDots(label_rows, n_labels, e_dim, features, logits);
    __syncthreads();
    if (threadIdx.x == 0) {
      losses[ex] = CrossEntropyFromLogits(logits, static_cast<int>(n_labels), label);
    }
  }
}

cudaError_t LabelHeadLoss(ElementType type, const void* hidden, const int32_t* lengths,
                          const int32_t* labels, const HeadNorm& norm, const void* project_out,
                          const void* label_rows, int64_t examples, int64_t seq, int64_t h,
                          int64_t e_dim, int64_t n_labels, float* losses, cudaStream_t stream) {
  const bool norm_fits = (norm.w != nullptr) == (norm.kind != NormKind::kNone) &&
                         (norm.b != nullptr) == (norm.kind == NormKind::kLayerNorm);
  if (examples < 0 || seq < 1 || h < 1 || e_dim < 1 || n_labels < 1 ||
      (project_out == nullptr && e_dim != h) || !norm_fits) {
    return cudaErrorInvalidValue;
  }
  if (examples == 0) return cudaSuccess;
  const size_t shared_bytes =
      static_cast<size_t>(h + (project_out != nullptr ? e_dim : 0) + n_labels) * sizeof(float);
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    if (cudaError_t e = cuda_nn::AllowDynamicShared(HeadLossKernel<T>, shared_bytes);
        e != cudaSuccess) {
      return e;
    }
    HeadLossKernel<T><<<cuda_nn::GridFor(examples, 1), kThreads, shared_bytes, stream>>>(
        static_cast<const T*>(hidden), lengths, labels, norm.kind,
        static_cast<const T*>(norm.w), static_cast<const T*>(norm.b), norm.eps,
        static_cast<const T*>(project_out), static_cast<const T*>(label_rows), examples, seq, h,
        e_dim, n_labels, losses);
    return cudaSuccess;
  });
}

}  // namespace zosched
