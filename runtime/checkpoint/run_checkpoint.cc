#include "runtime/checkpoint/run_checkpoint.h"

#include <cstring>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "runtime/checkpoint/content_hash.h"

namespace zosched {
namespace {

constexpr char kKind[] = "zosched.kind";
constexpr char kCheckpointKind[] = "checkpoint";  // kKind's value in a run checkpoint
constexpr char kModel[] = "zosched.model";
constexpr char kScheduleHash[] = "zosched.schedule_hash";
constexpr char kStep[] = "zosched.step";
constexpr char kTrajectoryLength[] = "zosched.trajectory_length";
constexpr char kTrajectoryHash[] = "zosched.trajectory_hash";
constexpr char kData[] = "zosched.data";
constexpr char kDataSource[] = "zosched.data_source";

// The metadata value under `key`, or FailedPrecondition naming the file.
absl::StatusOr<std::string> Metadata(const SafetensorsFile& file, const char* key) {
  const auto it = file.metadata().find(key);
  if (it == file.metadata().end()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is not a zosched run checkpoint (no \"%s\" in its metadata)", file.path(), key));
  }
  return it->second;
}

}  // namespace

std::string ScheduleHash(const Schedule& schedule) {
  Schedule computed = schedule;
  computed.clear_cluster();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    computed.SerializeToCodedStream(&coded);
  }
  return HashBytes(bytes);
}

std::string TrajectoryHash(const std::vector<TrajectoryEntry>& entries, int64_t count) {
  std::string bytes;
  // Appends the bytes of `value` as the machine holds them.
  auto append = [&bytes](const auto& value) {
    bytes.append(reinterpret_cast<const char*>(&value), sizeof(value));
  };
  for (int64_t i = 0; i < count; ++i) {
    const TrajectoryEntry& e = entries[i];
    append(e.step);
    for (const DirectionGradient& d : e.directions) {
      append(d.seed);
      append(d.g);
    }
    append(e.lr);
  }
  return HashBytes(bytes);
}

absl::Status WriteRunCheckpoint(const std::string& path, const Schedule& schedule,
                                const RunData& data, const std::vector<ParameterPart>& parts,
                                const std::vector<TrajectoryEntry>& trajectory) {
  const int64_t length = trajectory.size();
  const int64_t step = trajectory.empty() ? -1 : trajectory.back().step;
  return SaveModelParameters(path, schedule.model(), parts,
                             {{kKind, kCheckpointKind},
                              {kScheduleHash, ScheduleHash(schedule)},
                              {kStep, absl::StrCat(step)},
                              {kTrajectoryLength, absl::StrCat(length)},
                              {kTrajectoryHash, TrajectoryHash(trajectory, length)},
                              {kData, data.fingerprint},
                              {kDataSource, data.source},
                              {"zosched.pending_update", "trajectory.log"}});
}

bool IsRunCheckpoint(const SafetensorsFile& file) {
  const auto it = file.metadata().find(kKind);
  return it != file.metadata().end() && it->second == kCheckpointKind;
}

absl::StatusOr<RunCheckpoint> OpenRunCheckpoint(const std::string& path, const Schedule& schedule,
                                                const RunData& data,
                                                const std::vector<TrajectoryEntry>& trajectory) {
  ASSIGN_OR_RETURN(SafetensorsFile file, ReadSafetensors(path));
  ASSIGN_OR_RETURN(const std::string kind, Metadata(file, kKind));
  if (kind != kCheckpointKind) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s holds %s, not a run checkpoint: --resume needs the checkpoint.safetensors the run "
        "wrote (weights.safetensors has the last update applied; resuming from it would apply "
        "it twice)",
        path, kind));
  }
  if (absl::Status hash = CheckContentHash(file); !hash.ok()) {
    return absl::Status(hash.code(), absl::StrCat(hash.message(),
                                                  "; the run cannot resume from it (start "
                                                  "again with --overwrite)"));
  }
  ASSIGN_OR_RETURN(const std::string model, Metadata(file, kModel));
  if (model != schedule.model().name()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is a checkpoint of model '%s', but this run trains '%s'", path, model,
        schedule.model().name()));
  }
  ASSIGN_OR_RETURN(const std::string schedule_hash, Metadata(file, kScheduleHash));
  if (schedule_hash != ScheduleHash(schedule)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s was written by another schedule than this run's '%s' (the strategy, the "
        "training settings or the ops differ): resume with the flags or --schedule the run "
        "started with",
        path, schedule.name()));
  }
  ASSIGN_OR_RETURN(const std::string fingerprint, Metadata(file, kData));
  if (fingerprint != data.fingerprint) {
    const auto source = file.metadata().find(kDataSource);
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s was written by a run on other data: it trained on %s, this run reads %s, and the "
        "examples differ (another --data or --task, an edited or reordered file, or another "
        "tokenizer): resume with the data the run started with, or start afresh with "
        "--overwrite",
        path, source == file.metadata().end() ? "data not named" : source->second, data.source));
  }
  ASSIGN_OR_RETURN(const std::string length_text, Metadata(file, kTrajectoryLength));
  int64_t length = 0;
  if (!absl::SimpleAtoi(length_text, &length) || length < 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: \"%s\" is \"%s\", not a count", path, kTrajectoryLength, length_text));
  }
  if (length > static_cast<int64_t>(trajectory.size())) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s includes %d steps but trajectory.log has only %d: the log of this run is cut or "
        "from another run",
        path, length, trajectory.size()));
  }
  ASSIGN_OR_RETURN(const std::string trajectory_hash, Metadata(file, kTrajectoryHash));
  if (trajectory_hash != TrajectoryHash(trajectory, length)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s belongs to another run: the trajectory.log entries it was written after differ "
        "from this log's first %d",
        path, length));
  }
  return RunCheckpoint{std::move(file), length};
}

}  // namespace zosched
