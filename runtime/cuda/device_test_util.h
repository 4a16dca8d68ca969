// Helpers of the GPU tests: whether a GPU is visible (the tests skip when
// not) and device memory freed on destruction.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

namespace zosched {

inline bool HaveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

struct CudaFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DevicePtr = std::unique_ptr<void, CudaFree>;

// `bytes` of device memory (at least 1); null when cudaMalloc failed.
inline DevicePtr Alloc(size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes == 0 ? 1 : bytes) != cudaSuccess) return nullptr;
  return DevicePtr(p);
}

}  // namespace zosched
