#include "runtime/step_log.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "runtime/run_checkpointing.h"
#include "schedule/training_settings.h"

namespace zosched {

absl::StatusOr<std::unique_ptr<StepLog>> StepLog::Open(const std::string& out,
                                                       const TrainingSettings& settings,
                                                       bool resume,
                                                       std::vector<TrajectoryEntry> logged,
                                                       int first_step, int steps) {
  std::unique_ptr<StepLog> log(new StepLog(settings, std::move(logged), first_step, steps));
  ASSIGN_OR_RETURN(log->trajectory_,
                   TrajectoryWriter::Open(TrajectoryLogPath(out), settings.base_seed(),
                                          DirectionsOf(settings)));
  log->csv_.open(TrainCsvPath(out), resume ? std::ios::app : std::ios::trunc);
  if (!resume) log->csv_ << "step,loss,g,step_ms,tokens_per_s\n";
  return log;
}

absl::Status StepLog::Record(const Executor::StepOutcome& outcome, const StepInterval& interval) {
  if (!outcome.result.has_gradient) {
    return absl::InternalError("rank 0 ran no PROJECTED_GRADIENT op; nothing to log");
  }
  const std::vector<ZoState>& pending = outcome.result.pending;
  const int64_t step = outcome.step;
  TrajectoryEntry entry;
  entry.step = step;
  for (const ZoState& state : pending) entry.directions.push_back({state.seed, state.g});
  entry.lr = pending.front().learning_rate;
  RETURN_IF_ERROR(trajectory_->Append(step, entry.directions, entry.lr));
  logged_.push_back(std::move(entry));
  // The CSV's g: the mean of the directions' (each direction's is in the log).
  double g = 0;
  for (const ZoState& state : pending) g += state.g;
  g /= pending.size();
  const double step_s = (interval.end_ns() - interval.start_ns()) * 1e-9;
  const double tokens_per_s = settings_.batch_size() * settings_.seq_len() / step_s;
  const double loss = outcome.result.mean_loss;
  csv_ << absl::StrFormat("%d,%.6f,%.9g,%.3f,%.1f\n", step, loss, g, step_s * 1e3,
                          tokens_per_s);
  csv_.flush();
  progress_.StepDone(step, loss, tokens_per_s);
  return absl::OkStatus();
}

absl::Status StepLog::Sync() const { return SyncFile(trajectory_->path()); }

}  // namespace zosched
