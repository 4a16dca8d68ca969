// How long any wait of a training run for other ranks may last (a
// collective, the per-step meeting, start-up and teardown): given with
// --collective_timeout_s, or set from the simulator's prediction of the
// schedule's step. Decided once, by train's launcher (or by each rank of a
// hand-started mpirun, which has no launcher), and handed to the ranks with
// the schedule (runtime/rank_schedule.h), so that no rank simulates.
#pragma once

#include <chrono>

#include "absl/status/statusor.h"
#include "runtime/train_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The wait limit when none is given: 10 times the schedule's predicted
// step (the simulator on its cluster), at least 60 s.
// Errors: the simulator's, saying that --collective_timeout_s avoids it.
absl::StatusOr<std::chrono::seconds> AutoWaitTimeout(const Schedule& schedule);

// How long any wait for other ranks may last in the run of `schedule`
// (validated): `options.collective_timeout_s`, or AutoWaitTimeout when it
// is 0. Errors: AutoWaitTimeout's.
absl::StatusOr<std::chrono::seconds> WaitLimit(const TrainOptions& options,
                                               const Schedule& schedule);

}  // namespace zosched
