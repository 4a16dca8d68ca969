#include "runtime/calibration/copy_calibration.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "base/line_fit.h"
#include "base/status_macros.h"
#include "runtime/calibration/timing_device.h"
#include "runtime/calibration/timing_stats.h"
#include "runtime/precise_sleep.h"
#include "runtime/threaded_backend.h"

namespace zosched {

absl::Status MeasureCopies(int repeats, const Schedule& zo2, Cluster* out) {
  std::printf("throttled copies at the cluster's rates (seconds: min / median / max)\n");
  ASSIGN_OR_RETURN(const TimingDevice device, MakeTimingDevice(zo2, 0));
  CpuBackend* backend = device.backend.get();
  UsePreciseSleeps();  // as the runtime's copy streams sleep
  const Op* upload = nullptr;
  const Op* offload = nullptr;
  for (const Op& op : zo2.ops()) {
    if (op.has_copy() && op.copy().direction() == HOST_TO_DEVICE && !upload) upload = &op;
    if (op.has_copy() && op.copy().direction() == DEVICE_TO_HOST && !offload) offload = &op;
  }
  // A LoRA or prefix schedule offloads nothing (its base is frozen): its upload
  // reversed times the link's other direction.
  Op reversed;
  if (offload == nullptr && upload != nullptr) {
    reversed = *upload;
    CopyOp* c = reversed.mutable_copy();
    c->set_direction(DEVICE_TO_HOST);
    std::swap(*c->mutable_src(), *c->mutable_dst());
    const DType src = c->src_dtype();
    c->set_src_dtype(c->dst_dtype());
    c->set_dst_dtype(src);
    offload = &reversed;
  }
  if (upload == nullptr) return absl::InternalError("no copies to time");
  double latency_sum = 0;
  // The host CPU of each copy: its thread's CPU time against the bytes it
  // moves (the throttle's sleep is part of the fixed cost: arming the timer
  // and waking take a few tens of µs of a virtual CPU).
  std::vector<std::pair<double, double>> cpu_points;
  for (const Op* base : {upload, offload}) {
    std::vector<std::pair<double, double>> points;
    for (int64_t bytes = 64 << 10; bytes <= 4 << 20; bytes *= 4) {
      Op op = *base;
      const int64_t n = std::min<int64_t>(bytes, op.copy().src().size_bytes());
      op.mutable_copy()->mutable_src()->set_size_bytes(n);
      op.mutable_copy()->mutable_dst()->set_size_bytes(n);
      op.mutable_copy()->set_bytes(bytes);  // throttled as `bytes`
      std::vector<double> cpu;
      ASSIGN_OR_RETURN(Stats t, TimeRuns(repeats, [&] {
                         const double before = 1e-9 * ThreadCpuNs();
                         const absl::Status s = backend->RunCopy(op);
                         cpu.push_back(1e-9 * ThreadCpuNs() - before);
                         return s;
                       }));
      std::sort(cpu.begin(), cpu.end());
      cpu_points.push_back({static_cast<double>(n), cpu[cpu.size() / 2]});
      points.push_back({static_cast<double>(bytes), t.median});
      std::printf("  %s %8ld B: %.6f / %.6f / %.6f\n", base == upload ? "upload " : "offload",
                  bytes, t.min, t.median, t.max);
    }
    ASSIGN_OR_RETURN(const Line line, RobustLineFit(points));
    const double fixed = line.intercept, per_byte = line.slope;
    std::printf("  %s fit: %.1f us + bytes / %.3f GB/s\n", base == upload ? "upload" : "offload",
                fixed * 1e6, 1 / per_byte / 1e9);
    latency_sum += fixed;
  }
  ASSIGN_OR_RETURN(const Line cpu_line, RobustLineFit(cpu_points));
  const double cpu_fixed = cpu_line.intercept;
  const double cpu_gbps = cpu_line.slope > 0 ? 1 / cpu_line.slope / 1e9 : 0;
  std::printf("  host CPU per copy (thread CPU time): %.1f us + bytes moved / %.2f GB/s\n",
              cpu_fixed * 1e6, cpu_gbps);
  for (Device& d : *out->mutable_devices()) {
    d.mutable_host_link()->set_latency_s(std::max(0.0, latency_sum / 2));
    // MeasureStreamWakeUp adds the copy thread's wake-up.
    d.set_transfer_cpu_s(std::max(0.0, cpu_fixed));
    d.set_transfer_cpu_gbps(cpu_gbps);
  }
  return absl::OkStatus();
}

}  // namespace zosched
