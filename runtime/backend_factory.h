// The device backends `train` runs a schedule on, by name: "cpu" (the
// testbed, cpu_backend.h) and "cuda" (runtime/cuda/cuda_backend.h; only in
// builds with --config=cuda, which define ZOSCHED_WITH_CUDA here).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/mpi_world.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct BackendOptions {
  std::string name = "cpu";  // "cpu" or "cuda"
  bool allow_tf32 = false;   // cuda: FP32 GEMMs may use TF32 tensor cores
  int cpu_threads = 1;       // cpu: cores each device computes on (bitwise the same result)
};

// OK when this build and machine can run backend `name`. Errors:
// InvalidArgument naming the backends there are, or saying that "cuda"
// needs a --config=cuda build; FailedPrecondition when no GPU is visible.
absl::Status CheckBackendAvailable(const std::string& name);

// Whether the backend's host enqueues step t+1 while step t runs (cuda) or
// runs each step to its end first (cpu: every rank starts a step together,
// as the simulator assumes of the testbed).
bool PipelinesSteps(const std::string& name);

// The backend of device `device` of `schedule` (validated; both outlive it):
// see CpuBackend::Create and CudaBackend::Create for the arguments and
// errors.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options,
                                                       const Schedule& schedule, int device,
                                                       const std::vector<int32_t>& label_words,
                                                       NodeSharedMemory* host_memory,
                                                       MpiCollectives* collectives);

}  // namespace zosched
