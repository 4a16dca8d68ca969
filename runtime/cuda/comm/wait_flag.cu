#include "runtime/cuda/comm/wait_flag.h"

namespace zosched {

// One thread: the wait takes one SM slot, not an SM. Each read goes to host
// memory over PCIe (volatile: never cached in a register); the pause keeps
// the bus and the SM quiet between reads at a cost of about a microsecond of
// latency.
static __global__ void WaitFlagKernel(const volatile uint32_t* flag, uint32_t target,
                                      uint32_t abort_value) {
  for (;;) {
    const uint32_t value = *flag;
    if (value >= target || value == abort_value) return;
    __nanosleep(1000);
  }
}

cudaError_t LaunchWaitFlag(const volatile uint32_t* flag_device, uint32_t target,
                           uint32_t abort_value, cudaStream_t stream) {
  // cudaLaunchKernel returns this launch's error (cudaGetLastError after a
  // <<<>>> launch could return an earlier, unrelated one).
  void* args[] = {&flag_device, &target, &abort_value};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&WaitFlagKernel), dim3(1), dim3(1),
                          args, 0, stream);
}

}  // namespace zosched
