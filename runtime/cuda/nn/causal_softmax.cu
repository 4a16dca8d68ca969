#include "runtime/cuda/nn/causal_softmax.h"

#include <cstdint>

#include "runtime/cuda/nn/kernel_util.cuh"
#include "runtime/cuda/nn/row_math.h"

namespace zosched {
namespace {

constexpr int kThreads = 128;

}  // namespace

// Block (r, g): row r of head g. Dynamic shared memory: the row's scores
// [keys], then its unnormalised probabilities.
template <class T>
static __global__ void CausalSoftmaxKernel(float* scores, const int32_t* lengths, int64_t example,
                                           int64_t seq, int64_t prefix, int64_t first_row,
                                           int64_t keys, int64_t ld, int64_t head_stride) {
  extern __shared__ float row[];
  __shared__ float scratch[32];
  float* s = scores + blockIdx.y * head_stride + blockIdx.x * ld;
  T* p = reinterpret_cast<T*>(s);  // the same bytes: a 16-bit P overlaps S's first half
  const int64_t visible = CausalVisibleKeys(first_row + blockIdx.x, prefix, lengths[example], seq);
  if (visible <= 0) {
    const float fill = visible < 0 ? NAN : 0.0f;
    for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) p[j] = FromFloat<T>(fill);
    return;  // the whole block takes this branch
  }
  float max = -INFINITY;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    row[j] = s[j];
    max = fmaxf(max, row[j]);
  }
  max = cuda_nn::BlockMax(max, scratch);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    row[j] = expf(row[j] - max);  // this thread's own elements
    sum += row[j];
  }
  // BlockSum synchronises the block: every read of s is done before any
  // write of p below, which may overlap it.
  const float inv_sum = 1.0f / cuda_nn::BlockSum(sum, scratch);
  for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) {
    p[j] = FromFloat<T>(j < visible ? row[j] * inv_sum : 0.0f);
  }
}

cudaError_t CausalSoftmaxRows(ElementType type, float* scores, const int32_t* lengths,
                              int64_t example, int64_t seq, int64_t prefix, int64_t first_row,
                              int64_t rows, int64_t keys, int64_t ld, int64_t heads,
                              int64_t head_stride, cudaStream_t stream) {
  // Query rows never see past the row's keys (first_row + rows <= keys),
  // and the heads' matrices do not overlap (a 16-bit P row stays within its
  // own fp32 row, which no other block reads).
  if (rows < 1 || keys < 1 || heads < 1 || seq < 1 || example < 0 || prefix < 0 || ld < keys ||
      first_row < 0 || first_row + rows > keys || keys > prefix + seq || rows > INT32_MAX ||
      heads > 65535 || (heads > 1 && head_stride < rows * ld)) {
    return cudaErrorInvalidValue;
  }
  const size_t shared_bytes = static_cast<size_t>(keys) * sizeof(float);
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    if (cudaError_t e = cuda_nn::AllowDynamicShared(CausalSoftmaxKernel<T>, shared_bytes);
        e != cudaSuccess) {
      return e;
    }
    const dim3 grid(static_cast<unsigned int>(rows), static_cast<unsigned int>(heads));
    CausalSoftmaxKernel<T><<<grid, kThreads, shared_bytes, stream>>>(
        scores, lengths, example, seq, prefix, first_row, keys, ld, head_stride);
    return cudaSuccess;
  });
}

}  // namespace zosched
