// How train's launcher hands the ranks it starts under mpirun the schedule
// it prepared once (runtime/train_schedule.h: lowered or read, validated):
// as a binary Schedule file in a subdirectory of the job's directory
// (runtime/launcher.h: MpiJobDirectory), named to each rank by a flag.
// A rank reads the file, or where it is not on the rank's machine receives
// it over MPI from a rank that read it, and trusts it as validated; it neither lowers nor
// validates again (its device count is still checked against the ranks
// running: runtime/trainer.h). Once every rank has it, the rank that sent
// it removes it, so that Open MPI finds the job's directory empty at the end and
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

// Collective over MPI_COMM_WORLD, after ReadRankSchedule on every rank:
// gives every rank the schedule, where only some could read it (`have_it`;
// the others' ReadRankSchedule said NotFound). On several machines the
// launcher's $TMPDIR is on its own, so the ranks elsewhere get the schedule
// from the lowest rank that read it, over MPI. Returns whether this rank is
// that one (it removes the file once every rank has the schedule).
// Errors: FailedPrecondition when no rank could read it (naming `path`);
// Internal when the bytes received do not parse.
absl::StatusOr<bool> ShareRankSchedule(const std::string& path, bool have_it,
                                       Schedule* schedule);

// Removes the file at `path` that WriteRankSchedule wrote, and its
// subdirectory. Errors: Internal naming the path and the OS reason.
absl::Status RemoveRankSchedule(const std::string& path);

}  // namespace zosched
