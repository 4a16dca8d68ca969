#include "kernel_plans/multi_tensor_apply.h"

namespace zosched {
namespace {

constexpr int64_t kTorchMaxBlocks = 2240;
constexpr int64_t kTorchMaxTensors[5] = {770, 448, 336, 252, 210};
constexpr int64_t kTorchMaxTensorsScalarList[5] = {672, 448, 336, 252, 210};
constexpr int64_t kApexMaxBlocks = 320;
constexpr int64_t kApexMaxTensors[5] = {110, 64, 48, 36, 30};

}  // namespace

MultiTensorLimits TorchMultiTensorLimits(int depth, bool scalar_list) {
  MultiTensorLimits l;
  l.max_blocks = kTorchMaxBlocks;
  l.max_tensors = (scalar_list ? kTorchMaxTensorsScalarList : kTorchMaxTensors)[depth - 1];
  return l;
}

MultiTensorLimits ApexMultiTensorLimits(int depth) {
  MultiTensorLimits l;
  l.max_blocks = kApexMaxBlocks;
  l.max_tensors = kApexMaxTensors[depth - 1];
  return l;
}

int64_t MultiTensorLaunches(const std::vector<int64_t>& elements, const MultiTensorLimits& limits) {
  int64_t launches = 0, blocks = 0, listed = 0;
  for (const int64_t n : elements) {
    if (n == 0) continue;
    ++listed;
    const int64_t chunks = (n + limits.chunk_elements - 1) / limits.chunk_elements;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      ++blocks;
      const bool last_chunk = chunk == chunks - 1;
      if ((listed == limits.max_tensors && last_chunk) || blocks == limits.max_blocks) {
        ++launches;
        blocks = 0;
        listed = last_chunk ? 0 : 1;
      }
    }
  }
  return launches + (blocks > 0 ? 1 : 0);
}

}  // namespace zosched
