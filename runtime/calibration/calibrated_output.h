// Where the calibrated Cluster goes (--out, by default
// clusters/<name>.calibrated.pbtxt), checked before anything is measured so
// that a calibration is not lost at its end, and the writing of it.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "runtime/calibration/calibration_settings.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// settings.out, or clusters/<name of `cluster`>.calibrated.pbtxt, as the
// user meant it (base/user_path.h).
std::string OutPath(const CalibrationSettings& settings, const Cluster& cluster);

// OK when a file can be written at `path` (OutPath): it is not a directory,
// and its directory exists and this process may write there. Errors:
// InvalidArgument naming --out, the path and the reason.
absl::Status CheckOutPath(const CalibrationSettings& settings, const std::string& path);

// Validates `calibrated` and writes it to `path`, saying so on stdout.
// Errors: ValidateCluster's (naming it "calibrated"), WriteProtoFile's.
absl::Status WriteCalibrated(const Cluster& calibrated, const std::string& path);

}  // namespace zosched
