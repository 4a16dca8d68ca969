#include "runtime/calibration/timing_inputs.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace zosched {

absl::StatusOr<std::vector<StepBatch>> TimingBatches(const std::string& data,
                                                     const std::string& task, const Schedule& s,
                                                     int count) {
  std::string dir = data;
  std::string temporary;
  if (dir == "synthetic") {
    char name[] = "/tmp/zosched_calibrate_XXXXXX";
    if (mkdtemp(name) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary directory in /tmp: ", std::strerror(errno)));
    }
    temporary = dir = name;
    if (absl::Status written = WriteSyntheticTask(dir); !written.ok()) {
      std::filesystem::remove_all(temporary);
      return written;
    }
  }
  absl::StatusOr<TrainingTask> loaded = LoadTask(dir, task, s.model(), s.training().seq_len());
  if (!temporary.empty()) std::filesystem::remove_all(temporary);
  if (!loaded.ok()) return loaded.status();
  std::vector<StepBatch> batches(count);
  for (int step = 0; step < count; ++step) {
    loaded->FillStep(step, s.training().batch_size(), s.training().base_seed(), &batches[step]);
  }
  return batches;
}

StepInputs TimingInputs(const StepBatch& batch) {
  StepInputs inputs;
  inputs.seed = 7;
  inputs.learning_rate = 1e-6f;
  inputs.tokens = batch.tokens.data();
  inputs.lengths = batch.lengths.data();
  inputs.labels = batch.labels.data();
  return inputs;
}

}  // namespace zosched
