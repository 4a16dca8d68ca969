// The checkpoint of a training run, OUT_DIR/checkpoint.safetensors: the
// parameters exactly as stored (their storage dtypes) after the steps of
// the trajectory log's first `trajectory_length` entries, the last of
// those updates still pending (its (seed, g, η) is in the log). With the
// log it resumes a run bit for bit; the log's later entries replay on top
// of it (runtime/zo/trajectory_log.h).
//
// Its metadata (safetensors "__metadata__") says what it belongs to, so a
// wrong file is refused instead of resumed:
//   zosched.kind               "checkpoint" (weights.safetensors says "weights")
//   zosched.model              the model's name
//   zosched.schedule_hash      ScheduleHash of the schedule that ran
//   zosched.step               the last step it includes, -1 before step 0
//   zosched.trajectory_length  the log entries it includes
//   zosched.trajectory_hash    TrajectoryHash of those entries (the run's
//                              identity: another run's log differs)
//   zosched.data               the fingerprint of what the run trains on
//                              (runtime/task_fingerprint.h)
//   zosched.data_source        where that came from, for messages
//                              ("--data=DIR --task=sst2")
//   zosched.content_hash       runtime/checkpoint/content_hash.h
// It is written atomically (a temporary file, fsync, rename, fsync of the
// directory): after a crash at any point the previous checkpoint or the new
// one is there, whole.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/zo/trajectory_log.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// A hash of what a schedule computes: everything but its cluster (link and
// compute figures change timings, not a single bit of the weights).
std::string ScheduleHash(const Schedule& schedule);

// A hash of the first `count` entries of `entries` (their exact bits).
std::string TrajectoryHash(const std::vector<TrajectoryEntry>& entries, int64_t count);

// What a run trains on, part of its identity.
struct RunData {
  std::string fingerprint;  // runtime/task_fingerprint.h
  std::string source;       // e.g. "--data=synthetic --task=sst2", for messages
};

// Writes the checkpoint of a run of `schedule` on `data` after the steps of
// `trajectory` (all of it; empty: the initial parameters) to `path`.
// Errors: SaveModelParameters'.
absl::Status WriteRunCheckpoint(const std::string& path, const Schedule& schedule,
                                const RunData& data, const std::vector<ParameterPart>& parts,
                                const std::vector<TrajectoryEntry>& trajectory);

// Whether `file` is a run checkpoint (its "zosched.kind" is "checkpoint"),
// whichever run it belongs to: a file whose last update is still pending.
bool IsRunCheckpoint(const SafetensorsFile& file);

// A checkpoint that belongs to the run, opened.
struct RunCheckpoint {
  SafetensorsFile file;
  int64_t trajectory_length = 0;  // the log entries it includes
};

// Opens the checkpoint at `path` and checks that it is whole and that it
// belongs to the run of `schedule` on `data` whose log holds `trajectory`.
//
// Errors, each naming the file and what to do: those of ReadSafetensors;
// DataLoss for a content hash that does not match (a corrupted file);
// FailedPrecondition for a file without zosched's checkpoint metadata (e.g.
// weights.safetensors copied over it), another model, another schedule,
// other data (naming what the run trained on and what this one reads), a
// checkpoint beyond the end of the log, or a log whose entries up to the
// checkpoint differ from those it was written after (another run).
absl::StatusOr<RunCheckpoint> OpenRunCheckpoint(const std::string& path, const Schedule& schedule,
                                                const RunData& data,
                                                const std::vector<TrajectoryEntry>& trajectory);

}  // namespace zosched
