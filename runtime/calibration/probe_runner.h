// The probes that need several processes (all-gathers among ranks, two
// devices computing at once) run as this program again under mpirun, before
// MPI starts in the calibrating process (mpirun cannot be started from
// inside an MPI process).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/calibration/calibration_settings.h"

namespace zosched {

// Re-runs this program under `mpirun -np ranks` with the flags of
// `settings` that choose what is measured (--backend, --cluster, --model,
// --batch, --seq, --repeats) and `--<probe>=FILE` (probe: "collective_probe",
// "compute_probe" or "nic_probe"), on `hosts` (mpirun's --host list, e.g.
// "node1:1,node2:1"; "" for this machine), and returns FILE's
// whitespace-separated numbers. FILE is under /tmp and rank 0 writes it, so
// rank 0's machine must be this one or share its /tmp. Errors:
// RunUnderMpirun's; Internal when the probe exits non-zero.
absl::StatusOr<std::vector<double>> RunProbe(const CalibrationSettings& settings, int ranks,
                                             const std::string& probe,
                                             const std::string& hosts = "");

}  // namespace zosched
