// Whether a backend measures the kind of device a cluster describes.
// A calibration times this machine through its backend and writes the
// figures under the cluster's name: this CPU's timings filed as an H100's
// would mislead every prediction made from them.
#pragma once

#include "absl/status/status.h"
#include "runtime/calibration/calibration_choice.h"
#include "runtime/calibration/calibration_settings.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// OK when `calibration` (settings.backend's) measures the devices of
// `cluster` (loaded from settings.cluster): a calibration whose
// devices_share_host_cores measures the CPU testbed's (every device
// shares_host_cores, and a peer domain the all-gathers are throttled to),
// any other GPUs (no device shares_host_cores). Errors: InvalidArgument naming the cluster, a device
// of the wrong kind and what to calibrate instead, or the missing peer
// domain.
absl::Status CheckClusterKind(const CalibrationSettings& settings,
                              const KnownCalibration& calibration, const Cluster& cluster);

}  // namespace zosched
