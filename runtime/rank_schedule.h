// How train's launcher hands the ranks it starts under mpirun the schedule
// it prepared once (runtime/train_schedule.h: lowered or read, validated):
// as a binary Schedule file in a subdirectory of the job's directory
// (runtime/launcher.h: MpiJobDirectory), named to each rank by a flag.
// A rank reads the file and trusts it as validated; it neither lowers nor
// validates again (its device count is still checked against the ranks
// running: runtime/trainer.h). Once every rank has read it, rank 0 removes
// it, so that Open MPI finds the job's directory empty at the end and
// removes it even when the launcher is gone (kill -9).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Writes `schedule` into a new subdirectory of `job_directory` for the
// ranks; returns the file's path. Errors: Internal naming the
// subdirectory and the OS reason; WriteProtoFile's (base/proto_file.h).
absl::StatusOr<std::string> WriteRankSchedule(const std::string& job_directory,
                                              const Schedule& schedule);

// The schedule the launcher wrote at `path` for this rank. Errors: those of
// ReadProtoFile (missing, empty, unparsable), saying which file the launcher
// was to have prepared and that the job must be started again through
// train.
absl::StatusOr<Schedule> ReadRankSchedule(const std::string& path);

// Removes the file at `path` that WriteRankSchedule wrote, and its
// subdirectory. Errors: Internal naming the path and the OS reason.
absl::Status RemoveRankSchedule(const std::string& path);

}  // namespace zosched
