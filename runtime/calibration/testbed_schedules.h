// The schedules whose compute op shapes the CPU calibration measures: the
// testbed's grids (schedule/testbed_grid.h) for the model and sizes asked.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/calibration/calibration_settings.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Each of TestbedGrids() lowered on `cluster` for settings.model, batch,
// seq and directions, in FP32 (compute and host), learning rate 1e-6; in TestbedGrids()'s
// order, so the first is zo2's; where the cluster's hosts are joined by
// NICs and it has more than 2 devices, then distzo2 P1 x every device. Errors: the model's (LoadModelSpec);
// lowering's (InvalidArgument, or ResourceExhausted for a memory plan that
// does not fit the cluster), naming the schedule and --cluster.
absl::StatusOr<std::vector<Schedule>> TestbedSchedules(const CalibrationSettings& settings,
                                                       const Cluster& cluster);

}  // namespace zosched
