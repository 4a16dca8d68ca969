// The schedule a training run executes,
// prepared once, before any rank starts, by train's launcher (or by each
// rank of a hand-started mpirun, which has no launcher): lowered or read,
// the link overrides applied, validated (schedule/validate.h: one check,
// then trust). The ranks receive it (runtime/rank_schedule.h,
// runtime/trainer.h: Train) and neither lower nor validate it again; the
// wait limit comes with it (train/wait_limit.h).
#pragma once

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

}  // namespace zosched
