// One rank of a ZO training run. It receives the schedule and the wait
// limit prepared once, before any rank started (runtime/train_schedule.h;
// train's launcher hands them over as runtime/rank_schedule.h says), and
// neither lowers, validates nor simulates. It sets up the device on its
// backend (the CPU testbed or a GPU: device memory, the node-shared host
// store, collectives), initialises or resumes the parameters, enqueues the
// steps on the executor, and on rank 0 logs, evaluates, and writes the
// results. On a backend that pipelines steps (BackendCapabilities) the host
// enqueues step t+1 before it waits for step t, and logs each step once it
// has finished.
//
// Outputs in `out_dir` (rank 0; weights.safetensors, the final evaluation
// and the checksum only with final_outputs):
//   train.csv, trajectory.log  each step as it finishes (runtime/step_log.h)
//   checkpoint.safetensors   the run's checkpoint (runtime/checkpoint/
//                            run_checkpoint.h): written at the start, every
//                            `checkpoint_every` steps, on SIGINT/SIGTERM and
//                            at the end, atomically
//   weights.safetensors      the final parameters in fp32, update applied
//   schedule.pb              the schedule that ran
//   timeline.pb, trace.json  the measured Timeline (runtime/
//                            measured_timeline.h) and its Chrome trace
//
// Resuming (`resume`): the checkpoint is checked against the run (model,
// schedule, the log it was written after, its content hash), loaded, and
// the log's later entries are replayed on top of it
// (runtime/run_checkpointing.h). The result is bitwise the uninterrupted
// run's.
//
// Waits: every wait for other ranks has a deadline (the wait limit; 10
// times it where the others wait for rank 0's evaluation or checkpoint):
// the per-step meeting (runtime/mpi_world.h: MeetAll, which names the
// ranks that did not arrive), collectives, and, through runtime/watchdog.h,
// start-up and teardown. A stalled or dead rank ends the job.
#pragma once

#include <chrono>
#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/train_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// How a run that did not fail ended.
struct TrainEnd {
  int stop_signal = 0;  // the signal that stopped it early (SIGINT, SIGTERM, SIGUSR1), or 0
  int64_t last_step = -1;  // the last step it ran (and checkpointed, when stopped)
};

// Runs one rank (`rank` of `world` ranks, MPI already initialised) of
// `schedule` (validated: PrepareSchedule, runtime/train_schedule.h), each
// wait for other ranks limited to `wait_limit`. Returns the first error;
// the caller aborts the other ranks with it (without tearing down: the
// shared window and communicators stay, as the other ranks may be gone).
// Errors: InvalidArgument when the schedule's devices are not the ranks
// running; those of every stage, each naming it.
absl::StatusOr<TrainEnd> Train(const TrainOptions& options, const Schedule& schedule,
                               std::chrono::seconds wait_limit, int rank, int world);

}  // namespace zosched
