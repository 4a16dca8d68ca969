#include "runtime/rank_schedule.h"

#include <mpi.h>

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

absl::StatusOr<bool> ShareRankSchedule(const std::string& path, bool have_it,
                                       Schedule* schedule) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const int mine = have_it ? rank : world;
  int sender = world;
  MPI_Allreduce(&mine, &sender, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (sender == world) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "no rank could read %s, the schedule train's launcher prepared for its ranks: it is "
        "written under the launcher's $TMPDIR, on the machine train runs on; start train on one "
        "of the machines the ranks run on (--hosts), or start the run again",
        path));
  }
  std::string bytes;
  if (rank == sender && !schedule->SerializeToString(&bytes)) {
    return absl::InternalError("cannot serialise the schedule to send it to the other ranks");
  }
  int64_t size = static_cast<int64_t>(bytes.size());
  MPI_Bcast(&size, 1, MPI_INT64_T, sender, MPI_COMM_WORLD);
  bytes.resize(size);
  // MPI counts are ints: the bytes in pieces of at most 1 GiB.
  constexpr int64_t kPiece = int64_t{1} << 30;
  for (int64_t offset = 0; offset < size; offset += kPiece) {
    MPI_Bcast(bytes.data() + offset, static_cast<int>(std::min(kPiece, size - offset)), MPI_CHAR,
              sender, MPI_COMM_WORLD);
  }
  if (!have_it && !schedule->ParseFromString(bytes)) {
    return absl::InternalError(absl::StrFormat(
        "the schedule rank %d sent (%d bytes) does not parse", sender, size));
  }
  return rank == sender;
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
