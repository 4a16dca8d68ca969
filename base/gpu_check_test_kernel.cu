#include "base/gpu_check_test_kernel.h"

namespace zosched {

static __global__ void EmptyKernel() {}

cudaError_t LaunchEmptyKernelForTest(int blocks) {
  EmptyKernel<<<blocks, 32>>>();
  return cudaGetLastError();
}

}  // namespace zosched
