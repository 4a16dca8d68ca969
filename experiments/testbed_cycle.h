// The validation cycle for one schedule, on the CPU testbed or on NVIDIA
// GPUs (CycleCase::backend):
//   lower -> simulate on the (calibrated) cluster -> execute N steps for real
//   (train --backend=cpu|cuda, under mpirun when the schedule has
//   several devices) -> compare the timelines op by op
// and the files that show it: the schedule, both timelines, a Chrome trace
// holding both, and a picture with the predicted timeline above a measured
// step. The cycle runs whole (RunCycle) or in its two halves: PredictCycle
// (lower and simulate; no hardware needed) and MeasureCycle (execute and
// compare), for experiments that report the prediction whether or not they
// can measure it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/cluster.pb.h"
#include "schedule/compare_timelines.h"
#include "schedule/lowering.h"
#include "schedule/timeline.pb.h"
#include "experiments/breakdown_target.h"
#include "schedule/timeline_metrics.h"

namespace zosched {

struct CycleCase {
  std::string label;        // names the case's files: "zo2_balanced", ...
  std::string model;        // zoo name
  LowerOptions options;     // strategy and training settings
  double host_link_gbps = 0;  // emulated host-link rate, both directions (0: the cluster's)
  // train --backend: "cpu" (the testbed: MPI ranks, emulated links) or
  // "cuda" (NVIDIA GPUs; ranks share the visible GPUs round-robin).
  std::string backend = "cpu";
  // train --hosts (mpirun's --host list, "node1:2,node2:2") for a schedule
  // whose devices are on several machines; "" runs every rank on this one.
  std::string hosts;
  // Dev examples train evaluates after the last step (its --eval_examples,
  // >= 1), when final_outputs.
  int eval_examples = 64;
  // train's --final_outputs: evaluate and save the weights at the end. The
  // evaluation runs the fp32 forward on the host and the saves hold fp32
  // copies, so large models on GPUs turn it off (the timeline is written
  // either way).
  bool final_outputs = true;
};

// The first half of the cycle: the lowered schedule and its prediction.
struct CyclePrediction {
  std::string dir;            // <out_dir>/<label>: the case's files
  std::string schedule_path;  // <dir>/schedule.pb
  Schedule schedule;
  Timeline timeline;          // the predicted step (step 0)
  StepMetrics predicted;      // its metrics
};

struct CycleResult {
  Schedule schedule;
  StepMetrics predicted;      // the simulated step
  StepMetrics measured;       // the measured step with the median step time
  // The measured breakdown over the devices (experiments/breakdown_target.h):
  // the medians over the steps after warm-up of each step's overlap and
  // exposed communication (one step's vary by tens of points where devices
  // take turns on a core).
  Breakdown measured_breakdown;
  TimelineComparison comparison;
  // Mean training loss of the first and of the last `loss_window` steps
  // (train.csv).
  double first_loss = 0, last_loss = 0;
  std::string trace_path, picture_path, run_dir;
  // The CPU testbed: per device, the compute CPU time the run paid against
  // the calibration's figures and its collectives' host CPU per byte
  // (sim/run_compute_scales.h), and the step simulated again with them
  // (<dir>/run_costs.timeline.pb), which tells the model's error from the
  // machine's drift since calibration, and its breakdown. Empty and 0 when
  // the run measured no CPU times (GPUs).
  std::vector<double> run_compute_scales;
  std::vector<double> run_collective_cpu_gbps;
  int64_t run_costs_predicted_step_ns = 0;
  Breakdown run_costs_breakdown;
  // The CPU testbed: per device, the calibrated compute_time_scale times
  // the speed probe's drift between calibration and run, and the step
  // simulated again with them (<dir>/probed.timeline.pb): the calibrated
  // op costs on the machine as fast as it was during the run. Empty and 0
  // without probe samples or a calibrated probe (GPUs, uncalibrated
  // clusters).
  std::vector<double> probed_compute_scales;
  int64_t probed_predicted_step_ns = 0;
  Breakdown probed_breakdown;
  // The CPU testbed: per device, how much slower its core ran the speed
  // probe during the run than at calibration (sim/run_compute_scales.h
  // SpeedProbeDrifts; 0 for a device without). Empty on GPUs.
  std::vector<double> speed_drifts;
  // Filled in by MeasureOnSteadyMachine (experiments/steady_machine.h): the
  // runs it took, and each one's largest |drift - 1| and largest calibrated
  // compute_spread. 1 and empty otherwise.
  int attempts = 1;
  std::vector<double> attempt_drifts;
  std::vector<double> attempt_spreads;
};

// Lowers `c` on `cluster` (with its host links set to c.host_link_gbps when
// that is > 0) and simulates one step; writes <out_dir>/<label>/schedule.pb
// and predicted.timeline.pb.
//
// Errors: ResourceExhausted from lowering when the memory plan does not fit
// a device or host of `cluster` (naming it and the shortfall); other
// lowering and simulation errors; file errors.
absl::StatusOr<CyclePrediction> PredictCycle(const CycleCase& c, const Cluster& cluster,
                                             const std::string& out_dir);

// The programs a cycle runs, under `programs_dir` laid out as Bazel lays
// out its outputs and runfiles (the --programs_dir of the experiments that
// run them): <programs_dir>/train/train and <programs_dir>/runtime/calibrate.
std::string TrainProgram(const std::string& programs_dir);
std::string CalibrateProgram(const std::string& programs_dir);

// The second half: runs `train` (the path of the train program) on
// the predicted schedule with c.backend for `steps` steps, leaves the first
// `warmup` out, and compares the measured steps with the prediction. The
// run's files go to <prediction.dir>/run; the trace and the picture to
// <prediction.dir>; on the CPU testbed (train --speed_probe_every), the
// prediction again with the run's compute costs and with the cores' speed
// during the run (CycleResult::run_costs_predicted_step_ns,
// probed_predicted_step_ns).
//
// Errors: InvalidArgument "the training run of LABEL was refused (exit 2):
// MESSAGE" when train refuses to start (bad flags or inputs, or a backend
// this build or machine lacks: --backend=cuda without --config=cuda, or
// without a GPU), MESSAGE being train's own; Internal when the run fails
// otherwise (its log's path in the message); comparison errors.
absl::StatusOr<CycleResult> MeasureCycle(const CycleCase& c, const CyclePrediction& prediction,
                                         int steps, int warmup, const std::string& train,
                                         int loss_window = 10);

// PredictCycle, then MeasureCycle: the whole cycle for `c` on `cluster`;
// files under `out_dir`/<label>. Errors: those of both.
absl::StatusOr<CycleResult> RunCycle(const CycleCase& c, const Cluster& cluster, int steps,
                                     int warmup, const std::string& train,
                                     const std::string& out_dir, int loss_window = 10);

// Runs one of the runtime's programs (`argv[0]`: train, calibrate) with its
// stdout and stderr in the file `log`, as the cycle runs train. `what` names
// the run in errors ("the training run of 'zo2'", "calibration").
//
// Errors: InvalidArgument "WHAT was refused (exit 2): MESSAGE" when it exits
// 2 (the runtime's programs exit 2 for bad flags or inputs, and for a
// backend this build or machine lacks), MESSAGE being the log's last line
// (the program's own error); Internal "WHAT exited N; see LOG" for any other
// non-zero status; the errors of starting it (base/subprocess.h).
absl::Status RunRuntimeProgram(const std::string& what, const std::vector<std::string>& argv,
                               const std::string& log);

}  // namespace zosched
