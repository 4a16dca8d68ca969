// What a training run is asked to do (train's flags, runtime/train_main.cc)
// and what follows from it alone: where the outputs and the task are, what
// the run trains on, whether its output directory may be used.
//
// The launcher reads every field; a rank reads all but those that make the
// schedule and the wait limit (model, cluster, schedule, lowering, the link
// rates, collective_timeout_s), which it receives prepared
// (runtime/train_schedule.h, runtime/trainer.h: Train).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/backend_factory.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/task.h"
#include "schedule/lower_options.h"

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
  // LoRA or a prefix: a PEFT adapter directory
  // (runtime/checkpoint/peft_adapters.h) the adapters start from; "" starts
  // them as init_seed says (LoRA's B = 0; a prefix from the base's
  // activations on tokens drawn by init_seed).
  std::string init_adapters;
  bool resume = false;             // continue the run in out_dir
  bool overwrite = false;          // a fresh run may replace the outputs in out_dir
  std::string out_dir;
  // Steps between checkpoints (also one at the start, at the end and on a
  // stop signal); 0: none at all (benchmarks of models too big to save).
  int checkpoint_every = 1000;
  // Seconds any wait for other ranks may last; 0: AutoWaitTimeout
  // (runtime/train_schedule.h).
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

}  // namespace zosched
