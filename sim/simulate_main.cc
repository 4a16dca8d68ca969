// Predicts one step of a Schedule on its cluster and prints what bounds it.
//
//   bazel run //sim:simulate -- --schedule=/tmp/s.pbtxt
//       [--trace_out=/tmp/s.json] [--timeline_out=/tmp/s.timeline.pb]
//
// Prints the compute profile the GPU compute is costed by and the floor
// (the step with every compute op at its roofline), the step time,
// tokens/s (and, with q > 1 directions a step, the time per direction),
// per device the compute time, communication
// time, overlap, exposed communication, idle time and memory plan
// (docs/ARCHITECTURE.md, 'Simulator', Metrics), and the utilisation of every
// link that carried data. Writes the predicted Timeline (.pbtxt: text) and
// a Chrome trace JSON for Perfetto.
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags, an unreadable or invalid schedule, a cluster
// that lacks a figure the schedule needs, or an output path that cannot be
// created; 1 when writing an output fails.
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "schedule/chrome_trace.h"
#include "schedule/timeline_metrics.h"
#include "schedule/training_settings.h"
#include "schedule/validate.h"
#include "sim/roofline_floor.h"
#include "sim/simulator.h"

ABSL_FLAG(std::string, schedule, "", "Schedule file from //schedule:lower (.pbtxt: text)");
ABSL_FLAG(std::string, trace_out, "", "write a Chrome trace JSON here");
ABSL_FLAG(std::string, timeline_out, "", "write the predicted Timeline here (.pbtxt: text)");

namespace zosched {
namespace {

double Ms(int64_t ns) { return ns / 1e6; }

absl::Status Run() {
  if (absl::GetFlag(FLAGS_schedule).empty()) {
    return absl::InvalidArgumentError("--schedule is required (a file from //schedule:lower)");
  }
  Schedule schedule;
  RETURN_IF_ERROR(ReadProtoFile(ResolveUserPath(absl::GetFlag(FLAGS_schedule)), &schedule));
  RETURN_IF_ERROR(ValidateSchedule(schedule));
  // The prediction under the schedule's compute profile, and the floor
  // beside it: the same schedule with every GPU compute op at its roofline.
  SimResult result;
  ASSIGN_OR_RETURN(const StepWithFloor step, SimulateWithFloor(schedule, &result));
  const StepMetrics& m = step.metrics;
  const int64_t floor_ns = step.floor_ns;

  std::printf("schedule: %s\n", schedule.name().c_str());
  std::printf("compute profile: %s; floor (every compute op at its roofline): %.3f ms\n",
              ComputeProfile_Name(schedule.compute_profile()).c_str(), Ms(floor_ns));
  std::printf("step time: %.3f ms   tokens/s: %.0f   bound by: %s\n", Ms(m.step_ns),
              m.tokens_per_s, BindingResourceName(m.binding));
  if (const int q = DirectionsOf(schedule.training()); q > 1) {
    // n-SPSA: the step serves q directions (2q forwards of the batch).
    std::printf("directions: %d   per direction: %.3f ms\n", q, Ms(m.step_ns) / q);
  }
  std::printf("\n%-7s %-10s %11s %11s %9s %12s %10s %9s %11s %11s %-10s %11s\n", "device", "name",
              "compute_ms", "comm_ms", "overlap%", "exposed_ms", "idle_ms", "compute%", "host_ms",
              "peer_ms", "bound_by", "memory_GB");
  for (const DeviceMetrics& d : m.devices) {
    std::printf("%-7d %-10s %11.3f %11.3f %9.1f %12.3f %10.3f %9.1f %11.3f %11.3f %-10s %11.3f\n",
                d.device, d.cluster_device.c_str(), Ms(d.compute_ns), Ms(d.comm_ns),
                100 * d.overlap, Ms(d.exposed_comm_ns), Ms(d.idle_ns), 100 * d.compute_efficiency,
                Ms(d.host_link_ns), Ms(d.peer_link_ns), BindingResourceName(d.binding),
                d.memory_bytes / 1e9);
  }
  std::printf("\n%-34s %-12s %14s %12s %10s\n", "link", "class", "capacity_GB/s", "moved_GB",
              "util%");
  for (const LinkUsage& l : result.links) {
    if (l.bytes <= 0) continue;
    std::printf("%-34s %-12s %14.1f %12.3f %10.1f\n", l.name.c_str(),
                LinkClass_Name(l.link_class).c_str(), l.capacity_gbps, l.bytes / 1e9,
                100 * l.utilisation);
  }
  if (const std::string out = absl::GetFlag(FLAGS_timeline_out); !out.empty()) {
    RETURN_IF_ERROR(WriteProtoFile(ResolveUserPath(out), result.timeline));
    std::printf("\nwrote timeline %s\n", ResolveUserPath(out).c_str());
  }
  if (const std::string out = absl::GetFlag(FLAGS_trace_out); !out.empty()) {
    ASSIGN_OR_RETURN(std::string json, ChromeTraceJson(schedule, {&result.timeline}));
    RETURN_IF_ERROR(WriteFile(ResolveUserPath(out), json));
    std::printf("wrote Chrome trace %s (open in https://ui.perfetto.dev)\n",
                ResolveUserPath(out).c_str());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"simulate", "",
       "Predicts one step of a Schedule (--schedule) on its cluster: step time, tokens/s, per\n"
       "device compute, communication, overlap, exposed communication and idle time, link\n"
       "utilisation and the memory plan; writes the predicted Timeline and a Chrome trace."});
  return zosched::ExitWith("simulate", zosched::Run());
}
