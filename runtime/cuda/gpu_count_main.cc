// Prints how many CUDA GPUs this process sees (0 when none, or when the
// driver is missing), for scripts whose GPU checks skip without one.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  std::printf("%d\n", gpus);
  return 0;
}
