// Metrics of a Timeline (predicted or measured) of a Schedule, as
// docs/ARCHITECTURE.md ('Simulator', Metrics) defines them. Times are
// nanoseconds, like the Timeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

// The resource that bounds a device's step: the one busy longest.
enum class BindingResource { kCompute, kHostLink, kPeerLink };
const char* BindingResourceName(BindingResource r);  // "compute", "host link", "peer link"

struct DeviceMetrics {
  int device = 0;
  std::string cluster_device;
  int64_t compute_ns = 0;   // |union of compute op intervals|
  int64_t comm_ns = 0;      // |union of copy and collective intervals|
  int64_t overlap_ns = 0;   // |comm ∩ compute|
  double overlap = 0;       // overlap_ns / comm_ns (0 when there is no comm)
  int64_t exposed_comm_ns = 0;  // |comm \ compute|
  int64_t idle_ns = 0;      // step time - |compute ∪ comm|
  double compute_efficiency = 0;  // compute_ns / step time (0 when the step is empty)
  int64_t host_link_ns = 0; // |union of host<->device copy intervals|
  int64_t peer_link_ns = 0; // |union of collective and peer copy intervals|
  BindingResource binding = BindingResource::kCompute;  // longest of compute,
                                                        // host link, peer link
  int64_t memory_bytes = 0; // the memory plan: sum of the device's buffers
};

struct StepMetrics {
  int32_t step = 0;
  int64_t step_ns = 0;         // the step's end - start
  double tokens_per_s = 0;     // batch × seq_len / step time
  std::vector<DeviceMetrics> devices;  // in device id order
  BindingResource binding = BindingResource::kCompute;  // of the device with
                                                        // the longest busy resource
};

// Metrics of step `step` of `timeline` (a Timeline of `schedule`). The step
// spans its StepInterval if the timeline has one, else [min start, max end]
// of the step's ops. Op intervals are clipped to that span (this matters only
// when a StepInterval is narrower than its ops), so idle_ns >= 0. Every
// device of the schedule gets a DeviceMetrics, with or without ops.
//
// Resources: compute = compute ops; comm = copies and collectives; host link
// = HOST_TO_DEVICE and DEVICE_TO_HOST copies; peer link = collectives and
// DEVICE_TO_DEVICE copies. The step's binding is the binding of the device
// whose binding resource is busy longest (ties: the lower device id).
// tokens_per_s is 0 when step_ns is 0.
//
// `schedule` must pass ValidateSchedule's reference checks (device ids
// 0..n-1, every op's device and stream exist).
//
// Errors: InvalidArgument if the timeline has no op of that step, names an
// op id the schedule does not have or a device or stream other than that op's
// (naming the op id), has an interval that ends before it starts, or has two
// StepIntervals for the step.
absl::StatusOr<StepMetrics> ComputeStepMetrics(const Schedule& schedule,
                                               const Timeline& timeline,
                                               int32_t step);

}  // namespace zosched
