#include "runtime/calibration/cpu_calibration.h"

#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "runtime/calibration/collective_calibration.h"
#include "runtime/calibration/compute_calibration.h"
#include "runtime/calibration/copy_calibration.h"
#include "runtime/calibration/nic_calibration.h"
#include "runtime/calibration/core_sharing_calibration.h"
#include "runtime/calibration/stream_wake_calibration.h"
#include "runtime/calibration/testbed_schedules.h"
#include "runtime/calibration/timing_inputs.h"
#include "runtime/calibration/transfer_interruption_calibration.h"
#include "runtime/mpi_world.h"
#include "runtime/task.h"

namespace zosched {
namespace {

class CpuCalibrationRun : public PreparedCalibration {
 public:
  CpuCalibrationRun(const CalibrationSettings& settings, Cluster cluster,
                    std::vector<Schedule> schedules, std::vector<StepBatch> batches)
      : settings_(settings),
        cluster_(std::move(cluster)),
        schedules_(std::move(schedules)),
        batches_(std::move(batches)) {}

  absl::StatusOr<Cluster> Measure(int* argc, char*** argv) override {
    Cluster out = cluster_;
    out.set_name(cluster_.name() + "_calibrated");
    out.set_description(cluster_.description() + " (calibrated by //runtime:calibrate)");
    out.clear_measured_compute();
    RETURN_IF_ERROR(MeasureCollectives(settings_, &out));
    if (out.nics_size() > 0) RETURN_IF_ERROR(MeasureNics(settings_, &out));
    RETURN_IF_ERROR(MeasureSharedCoreSlowdown(settings_, &out));
    int rank = 0, world = 1;
    RETURN_IF_ERROR(InitMpi(argc, argv, &rank, &world));
    RETURN_IF_ERROR(MeasureCompute(settings_, schedules_, batches_, &out));
    RETURN_IF_ERROR(MeasureCopies(settings_.repeats, schedules_[0], &out));
    RETURN_IF_ERROR(MeasureStreamWakeUp(&out));
    RETURN_IF_ERROR(MeasureTransferInterruption(settings_.repeats, schedules_[0], batches_, &out));
    return out;
  }

 private:
  const CalibrationSettings settings_;
  const Cluster cluster_;
  const std::vector<Schedule> schedules_;  // TestbedSchedules: zo2's first
  const std::vector<StepBatch> batches_;
};

absl::StatusOr<std::unique_ptr<PreparedCalibration>> PrepareCpu(const CalibrationSettings& settings,
                                                                const Cluster& cluster) {
  RETURN_IF_ERROR(CheckNicHosts(settings, cluster));
  ASSIGN_OR_RETURN(std::vector<Schedule> schedules, TestbedSchedules(settings, cluster));
  ASSIGN_OR_RETURN(std::vector<StepBatch> batches,
                   TimingBatches(settings.data, settings.task, schedules[0], settings.repeats + 1));
  return std::make_unique<CpuCalibrationRun>(settings, cluster, std::move(schedules),
                                             std::move(batches));
}

absl::Status RunCpuProbe(const CalibrationSettings& settings) {
  if (!settings.nic_probe.empty()) return NicProbe(settings, settings.nic_probe);
  return settings.collective_probe.empty() ? ComputeProbe(settings, settings.compute_probe)
                                           : CollectiveProbe(settings, settings.collective_probe);
}

}  // namespace

const CalibrationBackend& CpuCalibration() {
  static const CalibrationBackend backend{&PrepareCpu, &RunCpuProbe};
  return backend;
}

}  // namespace zosched
