#include "runtime/cuda/nn/attention.h"

#include "runtime/cuda/nn/kernel_util.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 128;  // 4 warps per (example, head, query)
constexpr int kWarps = kThreads / 32;

}  // namespace

// Dynamic shared memory: the scaled query [head_dim] then the scores, later
// the unnormalised probabilities, of keys 0 .. i [seq].
template <class T>
static __global__ void CausalAttentionKernel(const T* q, const T* k, const T* v,
                                             const int32_t* lengths, int64_t examples, int64_t seq,
                                             int64_t heads, int64_t head_dim, float q_scale,
                                             T* context) {
  extern __shared__ float shared[];
  float* query = shared;             // [head_dim]
  float* probs = shared + head_dim;  // [seq]
  __shared__ float scratch[32];
  const int64_t width = heads * head_dim;  // row stride of q, k, v, context
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t items = examples * heads * seq;
  // Item = (example, head, query), query fastest: neighbouring blocks share
  // their keys and values in L2.
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t i = item % seq;
    const int64_t head = (item / seq) % heads;
    const int64_t e = item / (seq * heads);
    const int64_t row0 = e * seq;  // the example's first row
    const int64_t col0 = head * head_dim;
    T* out = context + (row0 + i) * width + col0;  // [head_dim]
    const int32_t length = lengths[e];
    if (length < 1 || length > seq || i >= length) {
      const float fill = (length < 1 || length > seq) ? NAN : 0.0f;
      for (int64_t c = threadIdx.x; c < head_dim; c += blockDim.x) out[c] = FromFloat<T>(fill);
      continue;  // the whole block takes this branch
    }
    __syncthreads();  // the previous item's readers of query and probs are done
    const T* q_row = q + (row0 + i) * width + col0;
    for (int64_t c = threadIdx.x; c < head_dim; c += blockDim.x) {
      query[c] = ToFloat(q_row[c]) * q_scale;
    }
    __syncthreads();
    // Scores: warp w takes keys w, w + kWarps, ...; its lanes split the dot
    // product and reduce it in a fixed order.
    const int64_t keys = i + 1;
    for (int64_t j = warp; j < keys; j += kWarps) {
      const T* k_row = k + (row0 + j) * width + col0;
      float dot = 0.0f;
      for (int64_t c = lane; c < head_dim; c += 32) dot += query[c] * ToFloat(k_row[c]);
      dot = cuda_nn::WarpSum(dot);
      if (lane == 0) probs[j] = dot;
    }
    __syncthreads();
    float max = -INFINITY;
    for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) max = fmaxf(max, probs[j]);
    max = cuda_nn::BlockMax(max, scratch);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) {
      const float p = expf(probs[j] - max);
      probs[j] = p;
      sum += p;
    }
    // BlockSum synchronises the block: every probs[j] is written after it.
    const float inv_sum = 1.0f / cuda_nn::BlockSum(sum, scratch);
    const T* v_col = v + row0 * width + col0;
    for (int64_t c = threadIdx.x; c < head_dim; c += blockDim.x) {
      float acc = 0.0f;
      for (int64_t j = 0; j < keys; ++j)
        acc += (probs[j] * inv_sum) * ToFloat(v_col[j * width + c]);
      out[c] = FromFloat<T>(acc);
    }
  }
}

cudaError_t CausalAttention(ElementType type, const void* q, const void* k, const void* v,
                            const int32_t* lengths, int64_t examples, int64_t seq, int64_t heads,
                            int64_t head_dim, float q_scale, void* context, cudaStream_t stream) {
  if (examples < 0 || seq < 1 || heads < 1 || head_dim < 1) return cudaErrorInvalidValue;
  const int64_t items = examples * heads * seq;
  if (items == 0) return cudaSuccess;
  const size_t shared_bytes = static_cast<size_t>(head_dim + seq) * sizeof(float);
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    if (cudaError_t e = cuda_nn::AllowDynamicShared(CausalAttentionKernel<T>, shared_bytes);
        e != cudaSuccess) {
      return e;
    }
    CausalAttentionKernel<T><<<cuda_nn::GridFor(items, 1), kThreads, shared_bytes, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), lengths,
        examples, seq, heads, head_dim, q_scale, static_cast<T*>(context));
    return cudaSuccess;
  });
}

}  // namespace zosched
