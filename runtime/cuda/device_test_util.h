// Helpers of the GPU tests and checks: how many GPUs this process sees (the
// tests skip without one, and fail where CUDA cannot tell) and device memory
// freed on destruction.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "runtime/cuda/visible_gpus.h"

namespace zosched {

// The number of GPUs this process sees (CountVisibleGpus: 0 for no device
// or no driver). Where CUDA cannot tell, prints
// "<who>: <error name>: <description>" to stderr and exits 1.
inline int VisibleGpusOrExit(const char* who) {
  int gpus = 0;
  const cudaError_t e = CountVisibleGpus(&gpus);
  if (e == cudaSuccess) return gpus;
  std::fprintf(stderr, "%s: %s: %s\n", who, cudaGetErrorName(e), cudaGetErrorString(e));
  std::exit(1);
}

// Whether the test has a GPU to run on (it skips when not). Where CUDA
// cannot tell (see VisibleGpusOrExit), the test binary prints the error and
// exits 1 at the first test that asks, so that the tests fail rather than
// skip.
inline bool HaveGpu() { return VisibleGpusOrExit("HaveGpu: cudaGetDeviceCount") > 0; }

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
