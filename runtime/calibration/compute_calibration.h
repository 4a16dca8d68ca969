// Calibration step 1 on the CPU testbed: what each compute op shape costs,
// and how fast each core the devices compute on is.
//
// Units: seconds.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "runtime/calibration/calibration_settings.h"
#include "runtime/task.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The cores the runtime pins compute to for `cluster`'s core-sharing devices
// (CpuBackend::ComputeCores): the i-th such device of a host on cores
// i*threads .. i*threads+threads-1, mod the usable cores. Per device (empty
// for the others).
std::vector<std::vector<int>> DeviceComputeCores(const Cluster& cluster, int threads);

// Every compute op shape (op class, examples, seq_len, elements) of
// `schedules`, run by the CPU backend of the device it first appears on,
// on `batches` in turn, timed in 4 × settings.repeats rounds: each round
// runs every shape once on each core the devices of `out` compute on (a
// burst of outside load on the VM then lands on all shapes and cores alike
// instead of on one shape's runs). The medians on core 0 become `out`'s
// measured_compute rows; each core's total over the shapes, against core
// 0's, becomes the compute_time_scale of the devices computing there, the
// speed probe's median on it their speed_probe_s, and how much its shapes'
// times vary from round to round (base/median.h RelativeSpread, the shapes
// weighted by their median time) their compute_spread. With
// settings.threads > 1 (a device's ops on the backend's own team of cores)
// only core 0's placement is timed and all three stay unset. Prints every
// shape's min, median and max. Errors: those of creating a backend and
// running an op.
absl::Status MeasureCompute(const CalibrationSettings& settings,
                            const std::vector<Schedule>& schedules,
                            const std::vector<StepBatch>& batches, Cluster* out);

}  // namespace zosched
