// What `calibrate` (runtime/calibrate_main.cc) needs of one backend's
// calibration library: preparing a calibration (every input read and
// checked, nothing measured), measuring, and the probes it re-runs itself
// for under mpirun. The CPU testbed's is cpu_calibration.h; the GPUs' is
// runtime/cuda/calibration/gpu_calibration_backend.h (--config=cuda builds).
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/calibration/calibration_settings.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// One calibration, its inputs read and checked.
class PreparedCalibration {
 public:
  virtual ~PreparedCalibration() = default;
  // Runs the probes under mpirun first (mpirun cannot be started from
  // inside an MPI process), then initialises MPI here (`argc`/`argv`),
  // measures the rest, printing each measurement, and returns the
  // calibrated cluster (named "<cluster>_calibrated", not yet validated or
  // written). Any error is a failure while measuring.
  virtual absl::StatusOr<Cluster> Measure(int* argc, char*** argv) = 0;
};

struct CalibrationBackend {
  // Reads and checks what calibrating `cluster` (loaded from
  // settings.cluster, of this backend's kind: CheckClusterKind) needs.
  // Errors are bad usage or bad inputs.
  absl::StatusOr<std::unique_ptr<PreparedCalibration>> (*prepare)(
      const CalibrationSettings& settings, const Cluster& cluster);
  // The probe this process was started for (settings.collective_probe or
  // settings.compute_probe set), MPI initialised.
  absl::Status (*run_probe)(const CalibrationSettings& settings);
  // The catalog cluster of this machine's devices, calibrated when
  // --cluster is not given, or "" where the backend does not tell (then
  // KnownCalibration's default_clusters); nullptr: never tells.
  std::string (*machines_cluster)() = nullptr;
};

}  // namespace zosched
