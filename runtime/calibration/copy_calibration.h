// Calibration step 2 on the CPU testbed: the host links' copies through the
// backend's own throttle, and the host CPU each copy takes.
//
// Units: seconds, bytes, GB/s (1e9 bytes per second).
#pragma once

#include "absl/status/status.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Uploads and offloads of 64 KiB .. 4 MiB (x4) through device 0's throttled
// copy of `zo2` (the zo2 schedule) at the cluster's link rates, each size
// once untimed and `repeats` times timed, fitted to a fixed cost + bytes /
// rate (base/line_fit.h: a line one slow size does not bend) -> every
// device's host_link.latency_s (the mean of the two fixed costs; the rate
// stays the throttle's setting). The copying thread's CPU time, fitted
// likewise -> transfer_cpu_s (fixed part; MeasureStreamWakeUp adds the
// thread's wake-up) and transfer_cpu_gbps (the bytes moved). Prints every
// size's min, median and max and the fits. Errors: Internal when `zo2` has
// no upload (a schedule without offloads, LoRA's, times its upload reversed
// for the other direction); those of the backend and the fits.
absl::Status MeasureCopies(int repeats, const Schedule& zo2, Cluster* out);

}  // namespace zosched
