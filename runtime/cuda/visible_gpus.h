// How many GPUs this process sees, telling "none" apart from "CUDA cannot
// tell": the one rule that the CUDA backend, the GPU tools and the GPU tests
// skip or fail by.
#pragma once

#include <cuda_runtime.h>

namespace zosched {

// cudaSuccess and *gpus, 0 where there is none to use: no device
// (cudaErrorNoDevice, also when CUDA_VISIBLE_DEVICES hides them all) or no
// NVIDIA driver installed (cudaErrorInsufficientDriver while
// cudaDriverGetVersion reports version 0: what the CUDA 13 runtime returns
// on a machine without the driver). Any other error of cudaGetDeviceCount
// (a driver too old for this runtime, a stub libcuda, a broken device) is
// returned, and *gpus is left 0: the count is unknown, not zero.
inline cudaError_t CountVisibleGpus(int* gpus) {
  *gpus = 0;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess) {
    *gpus = count;
    return cudaSuccess;
  }
  int driver = -1;
  const bool no_driver = e == cudaErrorInsufficientDriver &&
                         cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
  return e == cudaErrorNoDevice || no_driver ? cudaSuccess : e;
}

}  // namespace zosched
