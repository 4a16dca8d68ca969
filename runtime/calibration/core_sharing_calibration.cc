#include "runtime/calibration/core_sharing_calibration.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/status_macros.h"
#include "runtime/calibration/probe_runner.h"
#include "runtime/calibration/testbed_schedules.h"
#include "runtime/calibration/timing_device.h"
#include "runtime/calibration/timing_inputs.h"
#include "runtime/calibration/timing_stats.h"
#include "runtime/cpu_backend.h"
#include "runtime/mpi_world.h"
#include "runtime/usable_cores.h"
#include "schedule/cluster_catalog.h"

namespace zosched {

absl::Status ComputeProbe(const CalibrationSettings& settings, const std::string& path) {
  constexpr int kPasses = 3;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto barrier = [] { return SleepingBarrier(std::chrono::microseconds(50)); };
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(settings.cluster));
  ASSIGN_OR_RETURN(std::vector<Schedule> schedules, TestbedSchedules(settings, cluster));
  const Schedule& s = schedules[0];
  ASSIGN_OR_RETURN(const TimingDevice device, MakeTimingDevice(s, 0));
  CpuBackend* backend = device.backend.get();
  // Each rank on its own core, as the runtime pins device d's compute to
  // core d mod cores.
  PinThreadToCore(rank);
  const int batch = s.training().batch_size(), seq = s.training().seq_len();
  const StepBatch same_tokens{std::vector<int32_t>(batch * seq, 5),
                              std::vector<int32_t>(batch, seq), std::vector<int32_t>(batch, 0)};
  const StepInputs inputs = TimingInputs(same_tokens);
  std::vector<const Op*> ops;
  for (const Op& op : s.ops()) {
    if (!op.has_compute()) continue;
    const ComputeKind kind = op.compute().kind();
    if (kind != UPDATE && kind != BLOCK_FORWARD && kind != EMBED) continue;
    if (op.compute().params().part() != DECODER_BLOCK && kind == UPDATE) continue;
    if (op.compute().params().block() != 0) continue;
    ops.push_back(&op);
  }
  StepResult result;
  std::ostringstream ratios;
  for (int round = 0; round < settings.repeats + 2; ++round) {
    for (const Op* op : ops) {
      auto run = [&] { return backend->RunCompute(*op, inputs, &result); };
      RETURN_IF_ERROR(barrier());
      absl::StatusOr<Stats> alone = Stats{};
      if (rank == 0) alone = TimeRuns(kPasses, run);
      RETURN_IF_ERROR(alone.status());
      RETURN_IF_ERROR(barrier());
      // Rank 1 runs two passes more, so that rank 0's last timed pass
      // still has company when rank 1's core is the faster one.
      ASSIGN_OR_RETURN(Stats together, TimeRuns(rank == 0 ? kPasses : kPasses + 2, run));
      if (rank == 0) ratios << together.median / alone->median << "\n";
    }
  }
  RETURN_IF_ERROR(barrier());
  if (rank == 0) std::ofstream(path) << ratios.str();
  return absl::OkStatus();
}

absl::Status MeasureSharedCoreSlowdown(const CalibrationSettings& settings, Cluster* out) {
  if (UsableCores() < 2) {
    std::printf("two devices computing at once: never here (1 usable core): no slowdown\n");
    for (Host& h : *out->mutable_hosts()) h.set_shared_core_slowdown(1);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::vector<double> sharing, RunProbe(settings, 2, "compute_probe"));
  std::sort(sharing.begin(), sharing.end());
  const double slowdown = sharing.empty() ? 1 : std::max(1.0, sharing[sharing.size() / 2]);
  std::printf(
      "two devices (processes) computing at once: each %.3fx slower (median of %zu "
      "ratios: the largest ops in %d rounds; min %.3f, max %.3f)\n",
      slowdown, sharing.size(), settings.repeats + 2, sharing.empty() ? 1.0 : sharing.front(),
      sharing.empty() ? 1.0 : sharing.back());
  for (Host& h : *out->mutable_hosts()) h.set_shared_core_slowdown(slowdown);
  return absl::OkStatus();
}

}  // namespace zosched
