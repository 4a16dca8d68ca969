// Validation of a Schedule: the one check that makes a schedule safe to
// execute on real hardware and meaningful to simulate (docs/ARCHITECTURE.md,
// 'Validation: one check, then trust').
// Every tool (inspect, simulate, train, lowering itself) calls it before
// anything else touches the schedule; after it passes, every backend may
// trust every field.
#pragma once

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Returns OK if `schedule` can be executed and simulated. Otherwise the
// first problem found, checked in this order:
//
// 1. The embedded Cluster (ValidateCluster, the checks of a catalog file),
//    ModelSpec (ValidateModelSpec, the checks of a zoo file), the
//    (informative) strategy's kind, which must be unset or a StrategyKind,
//    and the training settings (ValidateTrainingSettings). InvalidArgument.
// 2. The structure (ValidateScheduleStructure, schedule/validate_structure.h):
//    references, cross-device edges, collective agreement, cycles, reads
//    before writes, races (InvalidArgument) and the memory plan
//    (ResourceExhausted).
// 3. The semantics (ValidateOpSemantics, schedule/validate_ops.h): streams,
//    buffers, each op's fields and operand roles against the model and the
//    training settings, copy dtypes and sizes, collective sizes, the
//    dataflow of every residual stream, the losses every projected gradient
//    reads, and each device's parameter homes. InvalidArgument.
//
// Each message names the op (id, name, device, stream), buffer, device or
// field, the value found and what was expected.
absl::Status ValidateSchedule(const Schedule& schedule);

}  // namespace zosched
