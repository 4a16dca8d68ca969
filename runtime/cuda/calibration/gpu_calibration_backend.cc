#include "runtime/cuda/calibration/gpu_calibration_backend.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "runtime/calibration/probe_runner.h"
#include "runtime/calibration/timing_inputs.h"
#include "runtime/cuda/calibration/calibration_plan.h"
#include "runtime/cuda/calibration/gpu_calibration.h"
#include "runtime/mpi_world.h"
#include "schedule/validate.h"

namespace zosched {
namespace {

// The schedules of `files` (comma-separated), each validated. Errors: the
// file's (NotFound, ...); InvalidArgument naming the file for one that does
// not validate, or for an empty entry.
absl::StatusOr<std::vector<Schedule>> ScheduleFiles(const std::string& files) {
  std::vector<Schedule> schedules;
  const std::vector<std::string> paths = absl::StrSplit(files, ',');
  for (const std::string& path : paths) {
    if (path.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--schedules='%s': an empty file name (expected comma-separated schedule files)", files));
    }
    Schedule schedule;
    RETURN_IF_ERROR(ReadProtoFile(ResolveUserPath(path), &schedule));
    if (absl::Status valid = ValidateSchedule(schedule); !valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--schedules: %s: %s", path, valid.message()));
    }
    schedules.push_back(std::move(schedule));
  }
  return schedules;
}

// The schedules of settings.schedules, or those GpuTargetSchedules lowers on
// `cluster` (printing each one left out).
absl::StatusOr<std::vector<Schedule>> GpuSchedules(const CalibrationSettings& settings,
                                                   const Cluster& cluster) {
  ASSIGN_OR_RETURN(const DType compute, ParseDTypeFlag("compute_dtype", settings.compute_dtype));
  if (const std::string& files = settings.schedules; !files.empty()) {
    return ScheduleFiles(files);
  }
  ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec(settings.model));
  ASSIGN_OR_RETURN(GpuTargets targets,
                   GpuTargetSchedules(model, cluster, settings.batch, settings.seq, compute));
  for (const std::string& why : targets.skipped) {
    std::printf("left out, its memory plan does not fit: %s\n", why.c_str());
  }
  return std::move(targets.schedules);
}

class GpuCalibrationRun : public PreparedCalibration {
 public:
  // `prepared`: everything but the collectives, which Measure adds.
  GpuCalibrationRun(const CalibrationSettings& settings, GpuCalibrationOptions prepared)
      : settings_(settings), prepared_(std::move(prepared)) {}

  // The collective probes under mpirun first, then MPI here and the rest.
  absl::StatusOr<Cluster> Measure(int* argc, char*** argv) override {
    GpuCalibrationOptions options = prepared_;

    const int gpus = VisibleGpus();
    std::printf(
        "collectives: the runtime's all-gathers, rank r on GPU r mod %d: NCCL where each "
        "rank has its own GPU, else host-staged MPI (seconds: median / min / max)\n",
        gpus);
    for (int ranks : {2, 4}) {
      ASSIGN_OR_RETURN(const std::vector<double> numbers,
                       RunProbe(settings_, ranks, "collective_probe"));
      ASSIGN_OR_RETURN(const std::vector<MeasuredCollective> rows, CollectiveRows(ranks, numbers));
      for (size_t i = 0; i < rows.size(); ++i) {
        std::printf("  %d ranks %9ld B: %.6f / %.6f / %.6f\n", ranks,
                    static_cast<long>(rows[i].bytes()), numbers[4 * i + 1], numbers[4 * i + 2],
                    numbers[4 * i + 3]);
      }
      options.collectives.insert(options.collectives.end(), rows.begin(), rows.end());
    }
    auto how = [gpus](int ranks) { return ranks <= gpus ? "NCCL" : "host-staged MPI"; };
    options.collectives_how =
        absl::StrFormat("all-gathers among 2 ranks (%s) and 4 ranks (%s)", how(2), how(4));

    int rank = 0, world = 1;
    RETURN_IF_ERROR(InitMpi(argc, argv, &rank, &world));
    return CalibrateGpu(options);
  }

 private:
  const CalibrationSettings settings_;
  const GpuCalibrationOptions prepared_;
};

absl::StatusOr<std::unique_ptr<PreparedCalibration>> PrepareGpu(const CalibrationSettings& settings,
                                                                const Cluster& cluster) {
  GpuCalibrationOptions prepared;
  prepared.cluster = cluster;
  ASSIGN_OR_RETURN(prepared.schedules, GpuSchedules(settings, cluster));
  // The data the compute ops run on, read before a GPU is looked for.
  ASSIGN_OR_RETURN(prepared.batches,
                   TimingBatchesOfEach(settings.data, settings.task, prepared.schedules,
                                       kComputeWarmupSteps + settings.repeats));
  prepared.repeats = settings.repeats;
  prepared.allow_tf32 = settings.tf32;
  RETURN_IF_ERROR(CheckClusterIsThisGpu(cluster));
  return std::make_unique<GpuCalibrationRun>(settings, std::move(prepared));
}

absl::Status RunGpuProbe(const CalibrationSettings& settings) {
  return GpuCollectiveProbe(settings.repeats, settings.collective_probe);
}

std::string GpusCluster() { return CatalogClusterOfThisGpu(); }

}  // namespace

const CalibrationBackend& GpuCalibration() {
  static const CalibrationBackend backend{&PrepareGpu, &RunGpuProbe, &GpusCluster};
  return backend;
}

}  // namespace zosched
