// One device of a schedule as the CPU calibration runs its ops: the real CPU
// backend (runtime/cpu_backend.h) in this process, over a host store of its
// own.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/cpu_backend.h"
#include "runtime/mpi_world.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct TimingDevice {
  std::unique_ptr<NodeSharedMemory> host;  // the host store the backend copies to and from
  std::unique_ptr<CpuBackend> backend;
};

// Device `device` of `s` (validated) computing on `threads` cores, its
// parameters initialised as a run's (InitialiseParts, kTimingInitSeed): its updates do their full
// work (a pending update is set), label words 10, 11, ... Errors: those of
// allocating the host store, of CpuBackend::Create and of StoredParts.
absl::StatusOr<TimingDevice> MakeTimingDevice(const Schedule& s, int device, int threads = 1);

}  // namespace zosched
