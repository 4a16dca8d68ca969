#include "runtime/calibration/timing_inputs.h"

#include <utility>

#include "absl/container/flat_hash_map.h"

namespace zosched {

namespace {

// The first `count` steps' batches of `loaded` as train draws them for `s`.
std::vector<StepBatch> DrawBatches(const TrainingTask& loaded, const Schedule& s, int count) {
  std::vector<StepBatch> batches(count);
  for (int step = 0; step < count; ++step) {
    loaded.FillStep(step, s.training().batch_size(), s.training().base_seed(), &batches[step]);
  }
  return batches;
}

}  // namespace

absl::StatusOr<std::vector<StepBatch>> TimingBatches(const std::string& data,
                                                     const std::string& task, const Schedule& s,
                                                     int count) {
  absl::StatusOr<TrainingTask> loaded =
      LoadTaskElsewhere(data, task, s.model(), s.training().seq_len());
  if (!loaded.ok()) return loaded.status();
  return DrawBatches(*loaded, s, count);
}

absl::StatusOr<std::vector<std::vector<StepBatch>>> TimingBatchesOfEach(
    const std::string& data, const std::string& task, const std::vector<Schedule>& schedules,
    int count) {
  // The task as read for a model (its serialized spec) and sequence length.
  absl::flat_hash_map<std::pair<std::string, int>, TrainingTask> read;
  std::vector<std::vector<StepBatch>> batches;
  for (const Schedule& s : schedules) {
    const std::pair<std::string, int> key(s.model().SerializeAsString(), s.training().seq_len());
    auto it = read.find(key);
    if (it == read.end()) {
      absl::StatusOr<TrainingTask> loaded =
          LoadTaskElsewhere(data, task, s.model(), s.training().seq_len());
      if (!loaded.ok()) return loaded.status();
      it = read.emplace(key, *std::move(loaded)).first;
    }
    batches.push_back(DrawBatches(it->second, s, count));
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
