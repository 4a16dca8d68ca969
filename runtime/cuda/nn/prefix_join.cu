#include "runtime/cuda/nn/prefix_join.h"

#include "runtime/cuda/nn/kernel_util.cuh"

namespace zosched {
namespace {

constexpr int kThreads = 256;

// The joins by value, as one kernel argument.
struct Joins {
  PrefixJoin join[kMaxPrefixJoins];
};

}  // namespace

// Grid z: the join; grid y strides over its rows, grid x over a row's
// columns.
template <class T>
static __global__ void JoinPrefixRowsKernel(Joins joins, int64_t prefix_rows, int64_t rows) {
  const PrefixJoin& j = joins.join[blockIdx.z];
  const T* prefix = static_cast<const T*>(j.prefix);
  const T* real = static_cast<const T*>(j.rows);
  T* out = static_cast<T*>(j.out);
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const T* from = r >= prefix_rows ? real + (r - prefix_rows) * j.ld
                    : prefix != nullptr ? prefix + r * j.width
                                        : nullptr;  // zeros
    T* to = out + r * j.width;
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < j.width;
         c += stride) {
      to[c] = from != nullptr ? from[c] : FromFloat<T>(0.0f);
    }
  }
}

cudaError_t JoinPrefixRows(ElementType type, const PrefixJoin* joins, int count,
                           int64_t prefix_rows, int64_t seq, cudaStream_t stream) {
  if (count < 1 || count > kMaxPrefixJoins || prefix_rows < 0 || seq < 1) {
    return cudaErrorInvalidValue;
  }
  Joins all;
  int64_t widest = 0;
  for (int i = 0; i < count; ++i) {
    const PrefixJoin& j = joins[i];
    if (j.rows == nullptr || j.out == nullptr || j.width < 1 || j.ld < j.width) {
      return cudaErrorInvalidValue;
    }
    all.join[i] = j;
    if (j.width > widest) widest = j.width;
  }
  const int64_t rows = prefix_rows + seq;
  return cuda_nn::ForElementType(type, [&](auto zero) {
    using T = decltype(zero);
    const dim3 grid(cuda_nn::GridFor(widest, kThreads), cuda_nn::RowBlocks(rows),
                    static_cast<unsigned int>(count));
    JoinPrefixRowsKernel<T><<<grid, kThreads, 0, stream>>>(all, prefix_rows, rows);
    return cudaSuccess;
  });
}

}  // namespace zosched
