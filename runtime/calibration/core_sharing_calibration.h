// Calibration step 1, second half, on the CPU testbed: how much slower a
// device computes while another device (process) computes at once ->
// Host.shared_core_slowdown.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "runtime/calibration/calibration_settings.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// Under mpirun -np 2: how much slower a device computes while another
// device (process) computes at once. Each rank runs the zo2 schedule's
// largest compute ops in rounds: in each round every op is timed on rank 0
// alone (rank 1 waits, sleeping) and then with both ranks running it, so a
// busy spell of the machine lands on one round's ratios, not on all of an
// op's runs alone or together (one calibration put the slowdown at 1.21
// from 5 ratios of one pass, the machine's own being 1.00). Rank 0 writes
// one ratio (together / alone, medians of the round's passes) per op and
// round to `path`; 2 + settings.repeats rounds, the zo2 schedule being the
// first of TestbedSchedules on settings.cluster. Errors: those of loading
// and lowering, of the backend, and of the barriers.
absl::Status ComputeProbe(const CalibrationSettings& settings, const std::string& path);

// Runs ComputeProbe on 2 ranks (probe_runner.h; before MPI starts here) and
// sets every host's shared_core_slowdown of `out` to the median ratio (1
// when there are none; at least 1). Prints the median, min and max. With
// one usable core (runtime/usable_cores.h) no two devices compute at once:
// the slowdown is 1, unmeasured, and it says so. Errors: RunProbe's.
absl::Status MeasureSharedCoreSlowdown(const CalibrationSettings& settings, Cluster* out);

}  // namespace zosched
