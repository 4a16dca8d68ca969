// The schedule a training run executes and how long its waits may last,
// prepared once, before any rank starts, by train's launcher (or by each
// rank of a hand-started mpirun, which has no launcher): lowered or read,
// the link overrides applied, validated (schedule/validate.h: one check,
// then trust); the wait limit from the flag or from the simulator's
// prediction of a step. The ranks receive both (runtime/rank_schedule.h,
// runtime/trainer.h: Train) and neither lower nor simulate.
#pragma once

#include <chrono>

#include "absl/status/statusor.h"
#include "runtime/train_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The schedule the run executes: `schedule` read from its file, else
// lowered from `model`, `cluster` and `lowering`; the link overrides
// applied; validated (schedule/validate.h). A first-order strategy is
// refused (train has no backward pass), naming the simulate command that
// predicts it instead.
//
// Errors: InvalidArgument for a first-order strategy; those of reading,
// lowering and ValidateSchedule.
absl::StatusOr<Schedule> PrepareSchedule(const TrainOptions& options);

// The wait limit when none is given: 10 times the schedule's predicted
// step (the simulator on its cluster), at least 60 s.
// Errors: the simulator's, saying that --collective_timeout_s avoids it.
absl::StatusOr<std::chrono::seconds> AutoWaitTimeout(const Schedule& schedule);

// How long any wait for other ranks may last in the run of `schedule`:
// `options.collective_timeout_s`, or AutoWaitTimeout when it is 0.
// Errors: AutoWaitTimeout's.
absl::StatusOr<std::chrono::seconds> WaitLimit(const TrainOptions& options,
                                               const Schedule& schedule);

}  // namespace zosched
