// Prints how many CUDA GPUs this process sees, for the scripts whose GPU
// checks skip without one: 0 (exit 0) where there is no device or no NVIDIA
// driver. Where CUDA cannot tell (any other error, a driver too old for this
// runtime among them), prints "gpu_count: <error name>: <description>" to
// stderr and exits 1, so that those checks fail instead of skipping.
#include <cstdio>

#include "runtime/cuda/device_test_util.h"

int main() {
  std::printf("%d\n", zosched::VisibleGpusOrExit("gpu_count"));
  return 0;
}
