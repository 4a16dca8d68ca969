#include "runtime/calibration/calibration_settings.h"

#include "base/flag_checks.h"
#include "base/status_macros.h"
#include "models/model_spec.h"
#include "schedule/cluster_catalog.h"
#include "schedule/training_settings.h"

namespace zosched {

std::string DefaultCluster(const std::string& backend) {
  if (backend != "cuda") return "local_cpu";
  return CatalogClusterPath("h100_sxm_x1").empty() ? "h100_sxm_x2" : "h100_sxm_x1";
}

absl::Status CheckBackendSettings(const CalibrationSettings& settings) {
  if (settings.backend == "cuda") {
    if (settings.threads != 1) {
      return absl::InvalidArgumentError("--threads applies to --backend=cpu only");
    }
    return absl::OkStatus();
  }
  if (settings.backend != "cpu") {
    return absl::InvalidArgumentError("--backend='" + settings.backend + "': expected cpu or cuda");
  }
  if (!settings.compute_dtype.empty() || settings.tf32) {
    return absl::InvalidArgumentError(
        "--compute_dtype and --tf32 apply to --backend=cuda only (the CPU testbed computes in "
        "FP32)");
  }
  if (!settings.schedules.empty()) {
    return absl::InvalidArgumentError(
        "--schedules applies to --backend=cuda only (the CPU testbed measures the shapes of "
        "--model, --batch and --seq)");
  }
  return absl::OkStatus();
}

absl::Status CheckCountSettings(const CalibrationSettings& settings) {
  RETURN_IF_ERROR(CheckFlagRange("repeats", settings.repeats, 1, 1000, "timed runs"));
  RETURN_IF_ERROR(CheckFlagRange("batch", settings.batch, 1, kMaxBatchSize, "examples per step"));
  RETURN_IF_ERROR(CheckFlagRange("threads", settings.threads, 1, 256, "cores per device"));
  return CheckFlagRange("seq", settings.seq, 1, kMaxPositions, "tokens");
}

}  // namespace zosched
