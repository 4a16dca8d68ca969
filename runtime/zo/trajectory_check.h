// Whether a trajectory log was written by the run it is about to continue:
// each entry's seeds (one a direction) and learning rate are what that run
// draws and uses at its step. --resume replays the entries past the
// checkpoint as updates, so a log edited by hand, or copied from another run
// (another --seed or --lr) past its checkpoint, would otherwise change the
// weights silently; the entries a checkpoint covers are also held by its
// trajectory hash (runtime/checkpoint/run_checkpoint.h). The projected
// gradients g_i cannot be checked without running the step again, nor the
// number of directions (the log's header holds it: ReadTrajectory's
// expected_directions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/zo/trajectory_log.h"

namespace zosched {

// OK when every entry has at least one direction, the seed of its direction
// i is DirectionSeed(StepSeed(base_seed, step), i) (runtime/zo/zo_math.h;
// direction 0's is the step seed itself) for every i, and its learning rate
// is `learning_rate` (as fp32).
// Errors: FailedPrecondition "PATH: step N ..." naming the first entry that
// differs (and its direction, when not direction 0), the value found, the
// value this run would use, and what to do (resume with the run's own flags
// or schedule, or start afresh).
absl::Status CheckTrajectoryIsThisRuns(const std::vector<TrajectoryEntry>& entries,
                                       uint64_t base_seed, float learning_rate,
                                       const std::string& path);

}  // namespace zosched
