#include "runtime/train_options.h"

#include "absl/strings/str_format.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "runtime/task_fingerprint.h"

namespace zosched {

absl::Status CheckOutputDirectory(const TrainOptions& o) {
  const std::string out = OutputDir(o.out_dir, "train");
  if (o.resume || o.overwrite) return absl::OkStatus();
  ASSIGN_OR_RETURN(const bool taken, DirectoryHasEntries(out));
  if (!taken) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is not empty (another run's outputs?): --resume continues the run there, "
      "--overwrite replaces it, or choose another --out_dir",
      out));
}

bool RankZeroCopiesModel(const TrainOptions& o) { return o.final_outputs || o.eval_every > 0; }

std::string TaskDirectory(const TrainOptions& o) {
  return o.data == "synthetic" ? OutputDir(o.out_dir, "train") + "/data" : o.data;
}

RunData DataOf(const TrainOptions& o, const TrainingTask& task) {
  return {TaskFingerprint(task), absl::StrFormat("--data=%s --task=%s", o.data, o.task)};
}

}  // namespace zosched
