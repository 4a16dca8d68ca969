// One rank of a ZO training run: lowers (or reads) the schedule, sets up the
// device on its backend (the CPU testbed or a GPU: device memory, the
// node-shared host store, collectives), initialises or resumes the
// parameters, enqueues the steps on the executor, and on rank 0 logs,
// evaluates, and writes the results. On a backend that pipelines steps
// (cuda) the host enqueues step t+1 before it waits for step t, and logs
// each step once it has finished.
//
// Outputs in `out_dir` (rank 0; the two .safetensors files, the final
// evaluation and the checksum only with final_outputs):
//   train.csv                step, loss, g, step_ms, tokens_per_s
//   trajectory.log           the MeZO trajectory (runtime/zo/trajectory_log.h)
//   checkpoint.safetensors   the parameters exactly as stored (their storage
//                            dtypes, the last step's update still pending:
//                            with trajectory.log this resumes bit for bit)
//   weights.safetensors      the final parameters in fp32, update applied
//   schedule.pb              the schedule that ran
//   timeline.pb, trace.json  the measured Timeline and its Chrome trace
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend_factory.h"
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
  std::string out_dir;
  int collective_timeout_s = 300;
  // At the end: evaluate, print the checksum and save checkpoint.safetensors
  // and weights.safetensors. False writes only the logs and the timeline
  // (benchmarks of models whose fp32 copies or files would not fit).
  bool final_outputs = true;
  // Where the measured Timeline and its Chrome trace go ("": out_dir's
  // timeline.pb and trace.json).
  std::string timeline_out, trace_out;
};

// The schedule the run executes: `schedule` read from its file, else
// lowered from `model`, `cluster` and `lowering`; the link overrides
// applied; validated (schedule/validate.h).
//
// Errors: those of reading, lowering and ValidateSchedule.
absl::StatusOr<Schedule> PrepareSchedule(const TrainOptions& options);

// Runs one rank (`rank` of `world` ranks, MPI already initialised). Returns
// the first error; the caller aborts the other ranks with it.
absl::Status Train(const TrainOptions& options, int rank, int world);

}  // namespace zosched
