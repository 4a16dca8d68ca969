#include "runtime/rank_schedule.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/proto_file.h"
#include "base/status_macros.h"

namespace zosched {

absl::StatusOr<std::string> WriteRankSchedule(const std::string& job_directory,
                                              const Schedule& schedule) {
  const std::string directory = job_directory + "/ranks";
  std::error_code error;
  if (!std::filesystem::create_directory(directory, error)) {
    return absl::InternalError(absl::StrFormat(
        "cannot make %s for the schedule the ranks read: %s; set TMPDIR to a writable directory",
        directory, error ? error.message() : "it exists already"));
  }
  const std::string path = directory + "/schedule.pb";
  RETURN_IF_ERROR(WriteProtoFile(path, schedule));
  return path;
}

absl::StatusOr<Schedule> ReadRankSchedule(const std::string& path) {
  Schedule schedule;
  if (absl::Status read = ReadProtoFile(path, &schedule); !read.ok()) {
    return absl::Status(
        read.code(),
        absl::StrCat("reading the schedule train's launcher prepared for its ranks: ",
                     read.message(),
                     "; the launcher writes it before mpirun starts the ranks, and it is "
                     "removed once every rank has read it: start the run again through train "
                     "(--ranks=N)"));
  }
  return schedule;
}

absl::Status RemoveRankSchedule(const std::string& path) {
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  std::error_code error;
  std::filesystem::remove_all(directory, error);
  if (error) {
    return absl::InternalError(absl::StrFormat(
        "cannot remove %s, the schedule every rank has read: %s", directory.string(),
        error.message()));
  }
  return absl::OkStatus();
}

}  // namespace zosched
