// The launch geometry of this package's grid-stride kernels (cast.cu,
// perturb.cu, update.cu): kThreads threads per block, at most kMaxBlocks
// blocks in a grid dimension; the kernels' loops cover whatever lies beyond.
// Host code for the .cu files (nvcc only; never included by their headers).
#pragma once

#include <cstdint>

namespace zosched {
namespace zo_grid {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

// Blocks for `work` items of one thread each, at most kMaxBlocks (>= 1).
inline unsigned Blocks(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace zo_grid
}  // namespace zosched
