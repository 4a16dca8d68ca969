// Which calibration backend `calibrate --backend=NAME` runs. calibrate
// lists the backends it knows (runtime/calibrate_main.cc), each with what it
// measures, so that choosing one and checking the flags (here) and the
// cluster (cluster_kind.h) against it ask what a backend measures and never
// compare backend names.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/calibration/calibration_backend.h"
#include "runtime/calibration/calibration_settings.h"

namespace zosched {

struct KnownCalibration {
  std::string name;  // --backend's value
  // It measures this machine's CPU as the CPU testbed, whose devices share
  // their host's cores (Device.shares_host_cores) and all-gather through
  // the peer domain they share, and it reads --threads. Otherwise it
  // measures accelerators, whose devices share no host cores, and reads
  // --compute_dtype, --tf32 and --schedules instead.
  bool devices_share_host_cores = false;
  // The clusters it calibrates when --cluster is not given, in order of
  // preference: the first that the catalog has a file for, else the last.
  std::vector<std::string> default_clusters;
  // Its library; nullptr in builds that do not link it.
  const CalibrationBackend& (*library)() = nullptr;
};

// The entry of `known` named settings.backend, checked against the flags
// it does not read. Errors: InvalidArgument for a name not in `known`
// (listing those that are), for --threads with a backend whose devices do
// not share host cores, and for --compute_dtype, --tf32 or --schedules with
// one whose devices do.
absl::StatusOr<const KnownCalibration*> ChooseCalibration(
    const CalibrationSettings& settings, const std::vector<KnownCalibration>& known);

// The cluster `calibration` calibrates when --cluster is not given (from
// its default_clusters).
std::string DefaultCluster(const KnownCalibration& calibration);

}  // namespace zosched
