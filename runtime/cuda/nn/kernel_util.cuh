// Device helpers shared by this package's kernels (nvcc only; included by
// .cu files, never by their headers): launch geometry, fixed-order warp and
// block reductions, and the ElementType switch of the launchers.
//
// Reductions are deterministic: each thread's partial result is reduced in
// a fixed butterfly within its warp and the warps' results in a fixed
// butterfly again, so for a given blockDim the result does not depend on
// timing, and every thread of the block receives the same bits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {
namespace cuda_nn {

// Grid-stride kernels are launched with at most this many blocks.
constexpr int64_t kMaxBlocks = int64_t{1} << 16;
// Shared memory (static plus dynamic) a block may use without opting in,
// and the most static shared memory a kernel of this package declares (its
// reduction scratch).
constexpr size_t kSharedBytesWithoutOptIn = 48 * 1024;
constexpr size_t kMaxStaticSharedBytes = 1024;

// Blocks for `items` work items of `per_block` each, capped at kMaxBlocks
// (the kernels loop over the rest); at least 1.
inline unsigned int GridFor(int64_t items, int64_t per_block) {
  int64_t blocks = (items + per_block - 1) / per_block;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<unsigned int>(blocks < 1 ? 1 : blocks);
}

// Grid y for kernels whose blocks stride over `rows` rows: one block row
// per row, at most 65535 (grid y's limit); at least 1.
inline unsigned int RowBlocks(int64_t rows) {
  constexpr int64_t kMaxGridY = 65535;
  return static_cast<unsigned int>(rows < 1 ? 1 : rows > kMaxGridY ? kMaxGridY : rows);
}

// Lets `kernel` be launched with `bytes` of dynamic shared memory (a
// no-op while that fits without opting in).
template <class Kernel>
cudaError_t AllowDynamicShared(Kernel kernel, size_t bytes) {
  if (bytes + kMaxStaticSharedBytes <= kSharedBytesWithoutOptIn) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

// Returns launch(T{}) with T the storage type of `type` (float, Half or
// BFloat16): the launcher's own error (a launch parameter it could not
// set), else the launch's (cudaGetLastError); cudaErrorInvalidValue for an
// unknown type.
template <class Launch>
cudaError_t ForElementType(ElementType type, Launch&& launch) {
  cudaError_t error = cudaSuccess;
  switch (type) {
    case ElementType::kF32: error = launch(float{}); break;
    case ElementType::kF16: error = launch(Half{}); break;
    case ElementType::kBF16: error = launch(BFloat16{}); break;
    default: return cudaErrorInvalidValue;
  }
  return error != cudaSuccess ? error : cudaGetLastError();
}

// The sum of `v` over the 32 lanes of a (full) warp, in every lane.
__device__ inline float WarpSum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float WarpMax(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// The sum (BlockSum) or max (BlockMax) of every thread's `v` over the block,
// returned to every thread. Call from all threads of the block (blockDim.x a
// multiple of 32, at most 1024); `scratch` is 32 floats of shared memory,
// free to reuse once the call returns.
__device__ inline float BlockSum(float v, float* scratch) {
  v = WarpSum(v);
  const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // earlier readers of scratch are done
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return WarpSum(lane < blockDim.x / 32 ? scratch[lane] : 0.0f);
}

__device__ inline float BlockMax(float v, float* scratch) {
  v = WarpMax(v);
  const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return WarpMax(lane < blockDim.x / 32 ? scratch[lane] : -INFINITY);
}

}  // namespace cuda_nn
}  // namespace zosched
