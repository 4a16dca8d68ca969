// A device-side wait on a word that the host writes: how a CUDA stream waits
// for a host thread (host_staged_communicator.h) without the thread that
// enqueues blocking on anything.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zosched {

// The flag value that releases every wait at once (after an error). The
// targets waited for stay below it.
constexpr uint32_t kWaitFlagAbort = 0xFFFFFFFFu;

// Enqueues on `stream` a kernel of one thread that spins, with
// __nanosleep(1000) between volatile reads, until *flag_device >= target or
// == abort_value; work enqueued later on `stream` runs after it. `flag_device`
// is the device pointer of mapped pinned host memory (cudaHostAlloc with
// cudaHostAllocMapped, then cudaHostGetDevicePointer): the host's stores
// reach the spinning kernel over PCIe. The host must keep the word
// monotonically increasing (or set it to abort_value). Returns the launch's
// error, not the kernel's.
cudaError_t LaunchWaitFlag(const volatile uint32_t* flag_device, uint32_t target,
                           uint32_t abort_value, cudaStream_t stream);

}  // namespace zosched
