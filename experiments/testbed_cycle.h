// The validation cycle on the CPU testbed, for one schedule:
//   lower -> simulate on the (calibrated) cluster -> execute N steps for real
//   (runtime/train under mpirun) -> compare the timelines op by op
// and the files that show it: the schedule, both timelines, a Chrome trace
// holding both, and a picture with the predicted timeline above a measured
// step.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "schedule/cluster.pb.h"
#include "schedule/compare_timelines.h"
#include "schedule/lowering.h"
#include "schedule/timeline_metrics.h"

namespace zosched {

struct CycleCase {
  std::string label;        // names the case's files: "zo2_balanced", ...
  std::string model;        // zoo name
  LowerOptions options;     // strategy and training settings
  double host_link_gbps = 0;  // emulated host-link rate, both directions (0: the cluster's)
};

struct CycleResult {
  Schedule schedule;
  StepMetrics predicted;      // the simulated step
  StepMetrics measured;       // the measured step with the median step time
  TimelineComparison comparison;
  // Mean training loss of the first and of the last `loss_window` steps
  // (train.csv).
  double first_loss = 0, last_loss = 0;
  std::string trace_path, picture_path, run_dir;
};

// Runs the cycle for `c` on `cluster` with `steps` training steps, of which
// the first `warmup` are left out of the comparison. `train` is the path of
// the runtime/train binary; files go under `out_dir`/<label>.
//
// Errors: lowering, simulation and comparison errors; Internal when the
// training run fails (its log's path in the message).
absl::StatusOr<CycleResult> RunCycle(const CycleCase& c, const Cluster& cluster, int steps,
                                     int warmup, const std::string& train,
                                     const std::string& out_dir, int loss_window = 10);

}  // namespace zosched
