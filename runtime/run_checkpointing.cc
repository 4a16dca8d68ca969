#include "runtime/run_checkpointing.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "runtime/zo/trajectory_check.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

// The outputs of a run, removed before a fresh run with --overwrite.
constexpr const char* kRunOutputs[] = {
    "checkpoint.safetensors", "checkpoint.safetensors.tmp", "weights.safetensors",
    "weights.safetensors.tmp", "trajectory.log", "train.csv", "schedule.pb",
    "timeline.pb", "trace.json"};

// Drops a last line of the trajectory log at `path` that a kill cut short
// (no '\n'): its step runs again on resume.
absl::Status DropTornLastLine(const std::string& path) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(path, &text));
  if (text.empty() || text.back() == '\n') return absl::OkStatus();
  const size_t keep = text.rfind('\n') + 1;  // 0 when no line is whole
  std::printf("%s: dropping a last line cut short (\"%s\"); its step runs again\n",
              path.c_str(), text.substr(keep).c_str());
  if (truncate(path.c_str(), keep) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot truncate ", path));
  }
  return absl::OkStatus();
}

// The entries of the run's trajectory log at `path` that --resume replays,
// a last line cut short left out (the resume drops it from the file too),
// each checked to be this run's (runtime/zo/trajectory_check.h).
absl::StatusOr<std::vector<TrajectoryEntry>> ReadRunLog(const std::string& path,
                                                        const Schedule& schedule) {
  std::string text;
  if (absl::Status read = ReadFileToString(path, &text); !read.ok()) {
    if (!absl::IsNotFound(read)) return read;
    return absl::NotFoundError(absl::StrFormat(
        "there is no run to resume: %s is missing; start a fresh run (without --resume)", path));
  }
  if (!text.empty() && text.back() != '\n') text.resize(text.rfind('\n') + 1);
  const TrainingSettings& t = schedule.training();
  ASSIGN_OR_RETURN(std::vector<TrajectoryEntry> entries,
                   ParseTrajectory(text, path, t.base_seed(), DirectionsOf(t)));
  RETURN_IF_ERROR(CheckTrajectoryIsThisRuns(entries, t.base_seed(), t.learning_rate(), path));
  return entries;
}

std::vector<ZoState> StatesOf(const TrajectoryEntry& entry) {
  std::vector<ZoState> states;
  for (const DirectionGradient& direction : entry.directions) {
    ZoState state;
    state.seed = direction.seed;
    state.g = direction.g;
    state.learning_rate = entry.lr;
    states.push_back(state);
  }
  return states;
}

}  // namespace

std::string TrajectoryLogPath(const std::string& out) { return out + "/trajectory.log"; }

std::string TrainCsvPath(const std::string& out) { return out + "/train.csv"; }

std::string CheckpointPath(const std::string& out) { return out + "/checkpoint.safetensors"; }

void RemoveRunOutputs(const std::string& out) {
  for (const char* name : kRunOutputs) std::remove((out + "/" + name).c_str());
}

absl::Status CheckStepsLeft(const std::string& out, int64_t done, int steps) {
  if (done < steps) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "the run in %s already has %d steps (0..%d), as many as --steps=%d asks for: give "
      "--steps=N with N > %d to train it further",
      out, done, done - 1, steps, done));
}

absl::Status TidyRunToResume(const std::string& out) {
  RETURN_IF_ERROR(DropTornLastLine(TrajectoryLogPath(out)));
  std::remove((CheckpointPath(out) + ".tmp").c_str());  // a checkpoint cut short
  return absl::OkStatus();
}

absl::StatusOr<RunToResume> ReadRunToResume(const std::string& out, const Schedule& schedule,
                                            const RunData& data) {
  ASSIGN_OR_RETURN(std::vector<TrajectoryEntry> entries,
                   ReadRunLog(TrajectoryLogPath(out), schedule));
  ASSIGN_OR_RETURN(RunCheckpoint checkpoint,
                   OpenRunCheckpoint(CheckpointPath(out), schedule, data, entries));
  return RunToResume{std::move(entries), std::move(checkpoint)};
}

absl::Status CheckResumable(const TrainOptions& o, const Schedule& schedule,
                            const RunData& data) {
  const std::string out = OutputDir(o.out_dir, "train");
  ASSIGN_OR_RETURN(const RunToResume run, ReadRunToResume(out, schedule, data));
  return CheckStepsLeft(out, run.entries.empty() ? 0 : run.entries.back().step + 1, o.steps);
}

LogReplay ReplayAfterCheckpoint(const std::vector<TrajectoryEntry>& entries, int64_t covered,
                                int directions) {
  LogReplay replay;
  replay.pending.assign(directions, ZoState{});  // nothing pending
  if (covered > 0) replay.pending = StatesOf(entries[covered - 1]);
  for (size_t i = covered; i < entries.size(); ++i) {
    replay.apply.push_back(replay.pending);
    replay.pending = StatesOf(entries[i]);
  }
  return replay;
}

}  // namespace zosched
