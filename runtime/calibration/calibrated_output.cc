#include "runtime/calibration/calibrated_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "schedule/cluster_validate.h"

namespace zosched {

std::string OutPath(const CalibrationSettings& settings, const Cluster& cluster) {
  return ResolveUserPath(settings.out.empty() ? "clusters/" + cluster.name() + ".calibrated.pbtxt"
                                              : settings.out);
}

absl::Status CheckOutPath(const CalibrationSettings& settings, const std::string& path) {
  const std::string where = settings.out.empty() ? absl::StrCat("--out (default ", path, ")")
                                                 : absl::StrCat("--out=", settings.out);
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is a directory (expected the file to write)", where));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the directory %s does not exist (create it, or choose another --out)", where, dir));
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot write in %s: %s (choose another --out)", where, dir, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteCalibrated(const Cluster& calibrated, const std::string& path) {
  RETURN_IF_ERROR(ValidateCluster(calibrated, "calibrated"));
  RETURN_IF_ERROR(WriteProtoFile(path, calibrated));
  std::printf("wrote %s\n", path.c_str());
  return absl::OkStatus();
}

}  // namespace zosched
