// Rank 0's record of a training run's steps, each as it finishes, in the
// output directory:
//   trajectory.log  the MeZO trajectory (runtime/zo/trajectory_log.h): the
//                   step's (seed, g, η), flushed every step
//   train.csv       step, loss (mean, nats), g, step_ms, tokens_per_s
// and the progress bar on stdout (runtime/progress_bar.h).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/executor.h"
#include "runtime/progress_bar.h"
#include "runtime/zo/trajectory_log.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

class StepLog {
 public:
  // Opens the logs in `out` for a run of `settings` that trains steps
  // first_step..steps-1. A fresh run (the outputs in `out` removed
  // before) starts them; a resumed one appends to them, `logged` being
  // the entries its trajectory.log holds. Errors: TrajectoryWriter::Open's.
  static absl::StatusOr<std::unique_ptr<StepLog>> Open(const std::string& out,
                                                       const TrainingSettings& settings,
                                                       bool resume,
                                                       std::vector<TrajectoryEntry> logged,
                                                       int first_step, int steps);

  // Records a finished step measured over `interval`. Errors: Internal
  // when this rank computed no projected gradient (nothing to log); those
  // of TrajectoryWriter::Append.
  absl::Status Record(const Executor::StepOutcome& outcome, const StepInterval& interval);

  // Every entry of trajectory.log: what a checkpoint written now covers.
  const std::vector<TrajectoryEntry>& entries() const { return logged_; }

  // Puts trajectory.log on disk (before a checkpoint that refers to it).
  // Errors: SyncFile's (base/files.h).
  absl::Status Sync() const;

 private:
  StepLog(const TrainingSettings& settings, std::vector<TrajectoryEntry> logged, int first_step,
          int steps)
      : settings_(settings), logged_(std::move(logged)), progress_(first_step, steps) {}

  const TrainingSettings settings_;
  std::unique_ptr<TrajectoryWriter> trajectory_;
  std::vector<TrajectoryEntry> logged_;
  std::ofstream csv_;
  ProgressBar progress_;
};

}  // namespace zosched
