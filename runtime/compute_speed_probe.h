// How fast the cores a device computes on are right now, for a backend
// whose compute runs on the host's CPU (the CPU testbed, cpu_backend.h):
// train --speed_probe_every times the speed probe (speed_probe.h) there
// between steps. A backend offers it by implementing ComputeSpeedProbe
// beside Backend; its registration then declares probes_compute_speed
// (backend_options.h), so that `train` can refuse the flag before it
// creates a backend. The Backend interface itself knows nothing of it.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/backend.h"

namespace zosched {

class ComputeSpeedProbe {
 public:
  virtual ~ComputeSpeedProbe() = default;
  // Times the speed probe where this device computes and returns its CPU
  // time in ns; between steps only.
  virtual absl::StatusOr<int64_t> ProbeComputeSpeedNs() = 0;
};

// `backend` as a ComputeSpeedProbe (the same object; valid while it lives).
// Errors: FailedPrecondition for a backend that does not implement it (its
// compute is not the host's CPU).
absl::StatusOr<ComputeSpeedProbe*> ComputeSpeedProbeOf(Backend& backend);

}  // namespace zosched
