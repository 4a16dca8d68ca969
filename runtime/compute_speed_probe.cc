#include "runtime/compute_speed_probe.h"

namespace zosched {

absl::StatusOr<ComputeSpeedProbe*> ComputeSpeedProbeOf(Backend& backend) {
  auto* probe = dynamic_cast<ComputeSpeedProbe*>(&backend);
  if (probe == nullptr) {
    return absl::FailedPreconditionError(
        "the speed probe times the CPU testbed's cores; this backend does not compute on them");
  }
  return probe;
}

}  // namespace zosched
