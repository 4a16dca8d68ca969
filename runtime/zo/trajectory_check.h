// Whether a trajectory log was written by the run it is about to continue:
// each entry's seed and learning rate are what that run draws and uses at
// its step. --resume replays the entries past the checkpoint as updates,
// so a log edited by hand, or copied from another run (another --seed or
// --lr) past its checkpoint, would otherwise change the weights silently;
// the entries a checkpoint covers are also held by its trajectory hash
// (runtime/checkpoint/run_checkpoint.h). The projected gradient g cannot
// be checked without running the step again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/zo/trajectory_log.h"

namespace zosched {

// OK when every entry's seed is StepSeed(base_seed, step) (runtime/zo/
// zo_math.h) and its learning rate is `learning_rate` (as fp32).
// Errors: FailedPrecondition "PATH: step N: ..." naming the first entry
// that differs, the value found, the value this run would use, and what to
// do (resume with the run's own flags or schedule, or start afresh).
absl::Status CheckTrajectoryIsThisRuns(const std::vector<TrajectoryEntry>& entries,
                                       uint64_t base_seed, float learning_rate,
                                       const std::string& path);

}  // namespace zosched
