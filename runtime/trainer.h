// One rank of a ZO training run: lowers (or reads) the schedule, sets up the
// device on its backend (the CPU testbed or a GPU: device memory, the
// node-shared host store, collectives), initialises or resumes the
// parameters, enqueues the steps on the executor, and on rank 0 logs,
// evaluates, and writes the results. On a backend that pipelines steps
// (cuda) the host enqueues step t+1 before it waits for step t, and logs
// each step once it has finished.
//
// Outputs in `out_dir` (rank 0; weights.safetensors, the final evaluation
// and the checksum only with final_outputs):
//   train.csv                step, loss, g, step_ms, tokens_per_s
//   trajectory.log           the MeZO trajectory (runtime/zo/trajectory_log.h),
//                            flushed every step
//   checkpoint.safetensors   the run's checkpoint (runtime/checkpoint/
//                            run_checkpoint.h): written at the start, every
//                            `checkpoint_every` steps, on SIGINT/SIGTERM and
//                            at the end, atomically
//   weights.safetensors      the final parameters in fp32, update applied
//   schedule.pb              the schedule that ran
//   timeline.pb, trace.json  the measured Timeline and its Chrome trace
//
// Resuming (`resume`): the checkpoint is checked against the run (model,
// schedule, the log it was written after, its content hash), loaded, and
// the log's later entries are replayed on top of it (each entry's (seed, g,
// η) is the update the device applied); a last log line cut short by a
// kill is dropped and its step runs again. The result is bitwise the
// uninterrupted run's.
//
// Waits: every wait for other ranks has a deadline (`collective_timeout_s`;
// 10 times it where the others wait for rank 0's evaluation or checkpoint):
// the per-step meeting (runtime/mpi_world.h: MeetAll, which names the
// ranks that did not arrive), collectives, and, through runtime/watchdog.h,
// start-up and teardown. A stalled or dead rank ends the job.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend_factory.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/task.h"
#include "schedule/lower_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct TrainOptions {
  // The device backend ("cpu" or "cuda") and its options (backend_factory.h).
  BackendOptions backend;
  std::string model;             // zoo name or ModelSpec textproto
  std::string cluster = "local_cpu";
  std::string schedule;          // a Schedule file; overrides the lowering flags
  LowerOptions lowering;         // strategy, P, D, slicing, slots, training settings
  // Emulated link rates (GB/s) that replace the cluster's for every device:
  // host link down and up, peer domain. 0 keeps the cluster's figure.
  double h2d_gbps = 0, d2h_gbps = 0, peer_gbps = 0;
  std::string data = "synthetic";  // "synthetic" or a directory (see task.h)
  std::string task = "sst2";       // sst2 or boolq
  int steps = 100;
  int eval_every = 0;              // 0: only at the end
  int eval_examples = 256;         // dev examples per evaluation (0: all)
  std::string init = "random";     // "random" or a .safetensors path
  uint64_t init_seed = 1;
  bool resume = false;             // continue the run in out_dir
  bool overwrite = false;          // a fresh run may replace the outputs in out_dir
  std::string out_dir;
  // Steps between checkpoints (also one at the start, at the end and on a
  // stop signal); 0: none at all (benchmarks of models too big to save).
  int checkpoint_every = 1000;
  // Seconds any wait for other ranks may last; 0: AutoWaitTimeout.
  int collective_timeout_s = 0;
  // At the end: evaluate, print the checksum and save checkpoint.safetensors
  // and weights.safetensors. False writes only the logs and the timeline
  // (benchmarks of models whose fp32 copies or files would not fit).
  bool final_outputs = true;
  // CPU testbed: before every N-th step, once all ranks are between
  // steps, time the speed probe on each device's compute core
  // (Timeline.speed_probes; runtime/speed_probe.h); 0: never. Each probe
  // adds a meeting, outside the steps' measured intervals; the step after
  // it starts with the probe's data in the caches (a probe before every
  // step made a 5 ms P2xD2 step about 2 % slower).
  int speed_probe_every = 0;
  // Where the measured Timeline and its Chrome trace go ("": out_dir's
  // timeline.pb and trace.json).
  std::string timeline_out, trace_out;
  // Rank 0 locks the output directory for the run (base/directory_lock.h):
  // set for the ranks of a hand-started mpirun; train's launcher (or a run
  // of one rank) holds the lock itself.
  bool lock_out_dir = false;
};

// The schedule the run executes: `schedule` read from its file, else
// lowered from `model`, `cluster` and `lowering`; the link overrides
// applied; validated (schedule/validate.h).
//
// Errors: those of reading, lowering and ValidateSchedule.
absl::StatusOr<Schedule> PrepareSchedule(const TrainOptions& options);

// A fresh run (neither `resume` nor `overwrite`) needs an empty or absent
// output directory. Errors: InvalidArgument saying what to do.
absl::Status CheckOutputDirectory(const TrainOptions& options);

// Whether rank 0 makes fp32 copies of the whole model (evaluations, the
// final outputs): runtime/host_memory_check.h counts them.
bool RankZeroCopiesModel(const TrainOptions& options);

// Where the run reads its task: `options.data`, or for "synthetic" the
// directory in the output directory where rank 0 writes it
// (WriteSyntheticTask, runtime/task.h).
std::string TaskDirectory(const TrainOptions& options);

// What a run on `task` read from `options` trains on, for its checkpoints.
RunData DataOf(const TrainOptions& options, const TrainingTask& task);

// Checks, without changing a file, that `options.resume` can continue the
// run in the output directory with `schedule` on `data`: its trajectory
// log (a last line cut short is ignored: the resume drops it) holds this
// run's entries (runtime/zo/trajectory_check.h), its checkpoint belongs to
// the run (runtime/checkpoint/run_checkpoint.h: the schedule, the data,
// the log), and steps remain before `options.steps`. The ranks check the
// same when they resume.
// Errors: NotFound when there is no run to resume; FailedPrecondition
// naming what differs or "the run already has N steps ... --steps";
// those of reading the log and the checkpoint.
absl::Status CheckResumable(const TrainOptions& options, const Schedule& schedule,
                            const RunData& data);

// The wait limit when none is given: 10 times the schedule's predicted
// step (the simulator on its cluster), at least 60 s.
// Errors: the simulator's.
absl::StatusOr<std::chrono::seconds> AutoWaitTimeout(const Schedule& schedule);

// How a run that did not fail ended.
struct TrainEnd {
  int stop_signal = 0;  // the signal that stopped it early (SIGINT, SIGTERM, SIGUSR1), or 0
  int64_t last_step = -1;  // the last step it ran (and checkpointed, when stopped)
};

// Runs one rank (`rank` of `world` ranks, MPI already initialised). Returns
// the first error; the caller aborts the other ranks with it (without
// tearing down: the shared window and communicators stay, as the other
// ranks may be gone).
absl::StatusOr<TrainEnd> Train(const TrainOptions& options, int rank, int world);

}  // namespace zosched
