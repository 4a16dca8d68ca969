#include "runtime/calibration/timing_inputs.h"

namespace zosched {

absl::StatusOr<std::vector<StepBatch>> TimingBatches(const std::string& data,
                                                     const std::string& task, const Schedule& s,
                                                     int count) {
  absl::StatusOr<TrainingTask> loaded =
      LoadTaskElsewhere(data, task, s.model(), s.training().seq_len());
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
