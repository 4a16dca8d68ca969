#include "runtime/calibration/calibration_settings.h"

#include "base/flag_checks.h"
#include "base/status_macros.h"
#include "models/model_spec.h"
#include "schedule/training_settings.h"

namespace zosched {

absl::Status CheckCountSettings(const CalibrationSettings& settings) {
  RETURN_IF_ERROR(CheckFlagRange("repeats", settings.repeats, 1, 1000, "timed runs"));
  RETURN_IF_ERROR(CheckFlagRange("batch", settings.batch, 1, kMaxBatchSize, "examples per step"));
  RETURN_IF_ERROR(CheckFlagRange("threads", settings.threads, 1, 256, "cores per device"));
  RETURN_IF_ERROR(CheckFlagRange("directions", settings.directions, 1, kMaxDirections,
                                 "perturbation directions a step"));
  return CheckFlagRange("seq", settings.seq, 1, kMaxPositions, "tokens");
}

}  // namespace zosched
