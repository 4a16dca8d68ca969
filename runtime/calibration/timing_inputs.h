// The data the calibrations (the CPU testbed's and the GPUs') run compute
// ops on: the first steps of the training data, as train draws them, and the
// step inputs around a batch.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/task.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The first `count` steps' batches of the task `task` in `data` (a task
// directory, or "synthetic") as train draws them for `s`
// (its batch size, sequence length and base seed). Attention's cost follows
// the examples' lengths. Errors: LoadTaskElsewhere's (runtime/task.h).
absl::StatusOr<std::vector<StepBatch>> TimingBatches(const std::string& data,
                                                     const std::string& task, const Schedule& s,
                                                     int count);

// TimingBatches of each of `schedules`, in order, the task read once for
// each model and sequence length they share. Errors: TimingBatches'.
absl::StatusOr<std::vector<std::vector<StepBatch>>> TimingBatchesOfEach(
    const std::string& data, const std::string& task, const std::vector<Schedule>& schedules,
    int count);

// The inputs compute ops run on: `batch` (which must outlive them), a fixed
// seed and a small learning rate.
StepInputs TimingInputs(const StepBatch& batch);

}  // namespace zosched
