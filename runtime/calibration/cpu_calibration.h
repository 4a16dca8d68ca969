// `calibrate --backend=cpu`: measures this machine as the CPU testbed and
// returns the calibrated Cluster, in the steps of its files:
//
// 1. Compute (compute_calibration.h): every compute op shape of the testbed's
//    schedules (testbed_schedules.h) for --model, each run by the real CPU
//    backend in this one process on each core the cluster's devices compute
//    on -> measured_compute, each device's compute_time_scale and
//    speed_probe_s; then under mpirun -np 2 the largest ops alone and while
//    the other process computes too (core_sharing_calibration.h) ->
//    Host.shared_core_slowdown.
// 2. Throttled copies (copy_calibration.h) -> the host links' latency_s,
//    Device.transfer_cpu_s and transfer_cpu_gbps.
// 3. Collectives (collective_calibration.h): the runtime's all-gather among
//    2 and 4 ranks -> the collective model's latencies and bus efficiency.
// 4. Stream wake-up (stream_wake_calibration.h) ->
//    Device.stream_wake_latency_s, same_core_wake_latency_s,
//    stream_signal_cost_s (and the waiter's
//    CPU added to transfer_cpu_s).
// 5. Transfer interruption (transfer_interruption_calibration.h) ->
//    Device.interrupt_cpu_s.
// The probes that need several processes run first, under mpirun; then the
// rest, in the order 1, 2, 4, 5. Every measurement is printed with its min,
// median and max.
#pragma once

#include "runtime/calibration/calibration_backend.h"

namespace zosched {

// The CPU testbed's calibration. Its prepare reads and checks the testbed
// schedules (TestbedSchedules: lowering's errors, ResourceExhausted for a
// memory plan that does not fit) and the training data (TimingBatches of
// settings.data and settings.task, settings.repeats + 1 steps); its probes
// are the collective and compute-sharing ones.
const CalibrationBackend& CpuCalibration();

}  // namespace zosched
