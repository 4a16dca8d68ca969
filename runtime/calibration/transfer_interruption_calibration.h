// Calibration step 5 on the CPU testbed: what a transfer thread's wake-up
// costs the compute of the device whose core it wakes on.
//
// Units: seconds (of thread CPU time).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "runtime/task.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// What a transfer thread's wake-up costs a device's compute on its core
// (runtime/core_sharing_probe.h): the zo2 schedule's step of compute ops on
// device 0, on the core and at the priority the runtime gives it, alone and
// while a second device's thread uploads block after block on that core
// (each upload sleeps out its throttle and wakes once, at its end; the next
// starts at once) -> every device's interrupt_cpu_s, the cost of one
// wake-up. Each upload is throttled as a transfer at least three times as
// long as its own thread CPU (the median of a few uploads timed first), so
// that its thread sleeps two thirds of each run or more whatever the
// cluster's link rate: a copy thread that never sleeps would take the core
// from the compute, which yields to it. An upload costs more CPU beside the
// compute than alone (cold caches; much more in a sanitized build), so
// when the probe stops a copy that sleeps less than a third of the time,
// the throttle doubles and the probe runs again, four times at most.
//
// Timed in 2 × `repeats` rounds of 2 steps, on batches[0]. Prints the
// result. Errors: Internal when `zo2` has no compute stream,
// upload or compute op; those of the backend; PerCopyComputeCpuSeconds's
// (ResourceExhausted when the uploads still keep their thread busy after
// the last doubling), prefixed with what was timed.
absl::Status MeasureTransferInterruption(int repeats, const Schedule& zo2,
                                         const std::vector<StepBatch>& batches, Cluster* out);

}  // namespace zosched
