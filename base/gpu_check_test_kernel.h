// Test-only kernel launcher for gpu_check_test: exercises the cuda_library
// build macro and kernel-launch error reporting.
#pragma once

#include <cuda_runtime.h>

namespace zosched {

// Launches an empty kernel on `blocks` blocks of 32 threads on the default
// stream and returns cudaGetLastError(). blocks == 0 is an invalid launch
// configuration, so the result is an error even on a machine with a GPU.
cudaError_t LaunchEmptyKernelForTest(int blocks);

}  // namespace zosched
