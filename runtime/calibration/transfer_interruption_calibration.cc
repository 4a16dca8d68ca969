#include "runtime/calibration/transfer_interruption_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/calibration/timing_device.h"
#include "runtime/calibration/timing_inputs.h"
#include "runtime/core_sharing_probe.h"
#include "runtime/precise_sleep.h"
#include "runtime/threaded_backend.h"
#include "runtime/usable_cores.h"
#include "schedule/cluster_lookup.h"

namespace zosched {

absl::Status MeasureTransferInterruption(int repeats, const Schedule& zo2,
                                         const std::vector<StepBatch>& batches, Cluster* out) {
  ASSIGN_OR_RETURN(const TimingDevice computing, MakeTimingDevice(zo2, 0));
  ASSIGN_OR_RETURN(const TimingDevice copying, MakeTimingDevice(zo2, 0));
  const Stream* compute_stream = nullptr;
  for (const Stream& stream : zo2.devices(0).streams()) {
    if (stream.kind() == COMPUTE && compute_stream == nullptr) compute_stream = &stream;
  }
  const Op* upload = nullptr;
  std::vector<const Op*> step;
  for (const Op& op : zo2.ops()) {
    if (op.device() != 0) continue;
    if (op.has_compute()) step.push_back(&op);
    if (op.has_copy() && op.copy().direction() == HOST_TO_DEVICE && upload == nullptr) upload = &op;
  }
  if (compute_stream == nullptr || upload == nullptr || step.empty()) {
    return absl::InternalError("the zo2 schedule has no compute stream, upload or compute op");
  }
  CpuBackend* copier = copying.backend.get();
  std::vector<double> upload_cpu_s;  // an upload's own thread CPU, 9 times
  for (int i = 0; i < 9; ++i) {
    const int64_t start_ns = ThreadCpuNs();
    RETURN_IF_ERROR(copier->RunCopy(*upload));
    upload_cpu_s.push_back(1e-9 * (ThreadCpuNs() - start_ns));
  }
  const double down_gbps =
      FindDevice(zo2.cluster(), zo2.devices(0).cluster_device())->host_link().down_gbps();
  Op timed_upload = *upload;
  const StepInputs inputs = TimingInputs(batches[0]);
  CpuBackend* computer = computing.backend.get();
  const CoreWork compute{
      [computer, compute_stream] { computer->PrepareStreamThread(*compute_stream); },
      [computer, &step, &inputs]() -> absl::Status {
        StepResult result;
        for (const Op* op : step) RETURN_IF_ERROR(computer->RunCompute(*op, inputs, &result));
        return absl::OkStatus();
      }};
  const CoreWork copy{[] {
                        PinThreadToCore(0);  // where device 0 computes
                        UsePreciseSleeps();  // as the runtime's copy streams sleep
                      },
                      [copier, &timed_upload] { return copier->RunCopy(timed_upload); }};
  const int rounds = 2 * repeats, passes = 2;
  absl::StatusOr<double> per_copy;
  for (double times_cpu = 3;; times_cpu *= 2) {
    const auto sleeping_bytes =
        static_cast<int64_t>(std::ceil(times_cpu * Median(upload_cpu_s) * down_gbps * 1e9));
    timed_upload.mutable_copy()->set_bytes(std::max(upload->copy().bytes(), sleeping_bytes));
    per_copy = PerCopyComputeCpuSeconds(compute, copy, rounds, passes);
    if (!absl::IsResourceExhausted(per_copy.status()) || times_cpu >= 24) break;
    std::printf("  the uploads kept their thread too busy (%s); throttled twice as long\n",
                std::string(per_copy.status().message()).c_str());
  }
  if (!per_copy.ok()) {
    return absl::Status(per_copy.status().code(),
                        absl::StrCat("timing a transfer thread's wake-ups on a device's core: ",
                                     per_copy.status().message()));
  }
  std::printf(
      "a transfer thread waking on a device's core: its compute takes %.1f us more CPU "
      "(median of %d rounds of %d zo2 steps alone and with uploads of %ld B, each "
      "throttled to %.1f us, back to back)\n",
      *per_copy * 1e6, rounds, passes, static_cast<long>(upload->copy().src().size_bytes()),
      timed_upload.copy().bytes() / (down_gbps * 1e3));
  for (Device& d : *out->mutable_devices()) d.set_interrupt_cpu_s(*per_copy);
  return absl::OkStatus();
}

}  // namespace zosched
