// The files a training run keeps in its output directory to be continued
// (`train --resume`), without MPI: the trajectory log and the checkpoint
// (runtime/zo/trajectory_log.h, runtime/checkpoint/run_checkpoint.h), how a
// resume reads them, and which of their steps it replays. The ranks' side
// (who writes, who waits) is runtime/trainer.cc's.
//
// A resumed run is bitwise the uninterrupted one: the checkpoint holds the
// parameters exactly as stored after the log's first entries, and each
// later entry's (seed, g, η) is the update the device applied, replayed on
// the host; a last log line cut short by a kill is dropped and its step
// runs again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/train_options.h"
#include "runtime/zo/trajectory_log.h"
#include "runtime/zo/zo_state.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The run's files in its output directory `out`.
std::string TrajectoryLogPath(const std::string& out);  // OUT/trajectory.log
std::string TrainCsvPath(const std::string& out);       // OUT/train.csv
std::string CheckpointPath(const std::string& out);     // OUT/checkpoint.safetensors

// Removes every output a run writes into `out` (the logs, checkpoints,
// weights, schedule, timeline and trace), so that a fresh run with
// --overwrite leaves none of another run beside its own.
void RemoveRunOutputs(const std::string& out);

// OK when a run in `out` that has trained `done` steps has steps left
// before `steps`. Errors: FailedPrecondition saying how to ask for more.
absl::Status CheckStepsLeft(const std::string& out, int64_t done, int steps);

// Once, before any rank reads the run in `out` to resume it: drops a last
// line of its log that a kill cut short (no '\n'; its step runs again,
// said on stdout) and a checkpoint whose writing was cut short (its .tmp).
// Errors: those of reading and truncating the log.
absl::Status TidyRunToResume(const std::string& out);

// What --resume continues from.
struct RunToResume {
  // The log's entries, a last line cut short left out, each checked to be
  // this run's (runtime/zo/trajectory_check.h).
  std::vector<TrajectoryEntry> entries;
  RunCheckpoint checkpoint;  // covers entries[0, checkpoint.trajectory_length)
};

// Reads the run of `schedule` on `data` in `out`, changing no file.
// Errors: NotFound when there is no log ("there is no run to resume");
// those of parsing and checking the log and of OpenRunCheckpoint.
absl::StatusOr<RunToResume> ReadRunToResume(const std::string& out, const Schedule& schedule,
                                            const RunData& data);

// Checks, without changing a file, that `options.resume` can continue the
// run in the output directory with `schedule` on `data`: its log holds this
// run's entries, its checkpoint belongs to the run, and steps remain before
// `options.steps`. The ranks check the same when they resume.
// Errors: ReadRunToResume's and CheckStepsLeft's.
absl::Status CheckResumable(const TrainOptions& options, const Schedule& schedule,
                            const RunData& data);

// How the parameters of a checkpoint that covers the first `covered` of
// the log's `entries` become those after the last entry: `apply`, in
// order, each applied on the host as a step's fused update does, then
// `pending` left pending, as after an uninterrupted step (learning rate 0:
// nothing pending). Each update has one ZoState per direction: `directions`
// of them (the run's q; the log's entries have as many).
struct LogReplay {
  std::vector<std::vector<ZoState>> apply;
  std::vector<ZoState> pending;
};
LogReplay ReplayAfterCheckpoint(const std::vector<TrajectoryEntry>& entries, int64_t covered,
                                int directions);

}  // namespace zosched
