// How fast a measured CPU-testbed run's devices computed, as each device's
// Device.compute_time_scale, so that the simulator can predict the run
// again with the machine's speed at the run rather than at calibration:
// from the compute CPU time the run actually paid, or from the speed probe
// timed between its steps; and what its collectives' host CPU cost
// (Device.collective_cpu_gbps). On a VM whose cores slow down by tens of per cent for seconds
// at a time (a busy SMT sibling on the host), the two differ by more than
// the model's own error; predicting from both tells the model's error from
// the machine's drift.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

// Per schedule device: the CPU time its compute ops took in `measured`
// (OpInterval.cpu_ns, all of the timeline's steps) over the cost model's
// durations for the same ops (the schedule's cluster without its
// compute_time_scales), once per step. 0 for a device without measured CPU
// times (a GPU run, or no compute op). That CPU time includes what the
// transfer threads' wake-ups cost the ops they interrupted
// (Device.interrupt_cpu_s): predict with these scales from
// WithoutInterruptCpu(schedule), or it counts twice.
//
// Errors: those of building the cost model or costing an op; InvalidArgument
// for an interval naming an op or device the schedule lacks.
absl::StatusOr<std::vector<double>> RunComputeScales(const Schedule& schedule,
                                                     const Timeline& measured);

// Per schedule device: how much slower its core ran the speed probe during
// `measured` than at calibration (1.3: 30 % slower; 0.8: faster): the median
// of the device's Timeline.speed_probes over Device.speed_probe_s. A run's
// devices time the probe at once (train, between the same two steps), but
// calibrate timed it alone; so where the schedule runs two or more of a
// host's core-sharing devices, the calibrated figure is Device
// .speed_probe_s times Host.shared_core_slowdown (what computing beside
// another device cost at calibration, taken to slow the probe as it slows
// the ops it was measured on): a run in which that cost was gone, or came,
// drifts by it. 0 for a device without probe samples or without
// speed_probe_s.
//
// Errors: InvalidArgument for a sample naming a device the schedule lacks.
absl::StatusOr<std::vector<double>> SpeedProbeDrifts(const Schedule& schedule,
                                                     const Timeline& measured);

// Per schedule device: its cluster device's compute_time_scale (0 taken as
// 1) times its SpeedProbeDrifts: the calibrated op costs stay; only the
// machine's drift since calibration is taken out. 0 where the drift is 0.
//
// Errors: those of SpeedProbeDrifts.
absl::StatusOr<std::vector<double>> ProbedComputeScales(const Schedule& schedule,
                                                        const Timeline& measured);

// Per schedule device: the per-byte rate of its collectives' host CPU in
// `measured` (Device.collective_cpu_gbps as the run paid it): the gathered
// bytes of its collective ops over their threads' CPU time (OpInterval
// .cpu_ns), less each op's fixed Device.transfer_cpu_s, all of the
// timeline's steps. 0 for a device without measured collective CPU times.
//
// Errors: InvalidArgument for an interval naming an op or device the
// schedule lacks.
absl::StatusOr<std::vector<double>> RunCollectiveCpuGbps(const Schedule& schedule,
                                                         const Timeline& measured);

// `schedule` with each device's cluster device given compute_time_scale
// `scales[d]` (> 0; 0 leaves it as it is).
Schedule WithComputeScales(const Schedule& schedule, const std::vector<double>& scales);

// `schedule` with each device's cluster device given collective_cpu_gbps
// `gbps[d]` (> 0; 0 leaves it as it is).
Schedule WithCollectiveCpuGbps(const Schedule& schedule, const std::vector<double>& gbps);

// `schedule` with every cluster device's interrupt_cpu_s cleared.
Schedule WithoutInterruptCpu(const Schedule& schedule);

}  // namespace zosched
