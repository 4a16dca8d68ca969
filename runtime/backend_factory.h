// The device backend `train` runs a schedule on, by the name it registered
// under (backend_registry.h): "cpu" (the testbed, cpu_backend.h) and "cuda"
// (runtime/cuda/cuda_backend.h; runnable only in builds with --config=cuda).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/backend_options.h"
#include "runtime/mpi_world.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// OK when this build and machine can run backend `name`. Errors:
// InvalidArgument naming the backends there are, or the backend's own
// reason (e.g. that "cuda" needs a --config=cuda build); FailedPrecondition
// when the machine lacks its device (no GPU visible).
absl::Status CheckBackendAvailable(const std::string& name);

// The capabilities of backend options.name (a name CheckBackendAvailable accepted).
BackendCapabilities CapabilitiesOf(const BackendOptions& options);

// The backend of device `device` of `schedule` (validated; both outlive it):
// see CpuBackend::Create and CudaBackend::Create for the arguments and
// errors.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options,
                                                       const Schedule& schedule, int device,
                                                       const std::vector<int32_t>& label_words,
                                                       NodeSharedMemory* host_memory,
                                                       MpiCollectives* collectives);

}  // namespace zosched
