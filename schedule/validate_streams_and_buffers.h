// The checks of where a schedule's ops run and what memory they use: each
// device's streams and each buffer's kind, home, persistence and parameter
// placements (schedule/validate_ops.h steps 1 and 2 run them, before any
// op's operands are checked against the buffers).
#pragma once

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"
#include "schedule/validate_operands.h"

namespace zosched {

// Returns OK if each device has exactly one COMPUTE stream and every op runs
// on a stream of its kind: compute ops on the COMPUTE stream, H2D / D2H /
// DEVICE_TO_DEVICE copies on an H2D / D2H / PEER stream, collectives on a
// COLLECTIVE stream. `schedule` must pass ValidateScheduleStructure.
// Errors: InvalidArgument naming the device or the op.
absl::Status ValidateStreams(const Schedule& schedule);

// Returns OK if every buffer of `schedule` is one `family` has: no kind only
// the other family has; kind and dtype set; HOST_PARAMS in host memory and
// every other kind on a device; HOST_PARAMS, RESIDENT_PARAMS, ZO_STATE,
// OPTIMIZER_STATE and MASTER_WEIGHTS persistent; ParamPlacements only on
// parameter buffers, each naming a valid part and block (below the layer
// count), holding the whole part (or, where the family shards placements,
// a non-empty range of it) inside its buffer at a multiple of the element
// size, none overlapping; and, where the family says, exactly one ZO_STATE
// buffer per device. The schedule's model must be valid and it must pass
// ValidateScheduleStructure. Errors: InvalidArgument naming the buffer or
// the device.
absl::Status ValidateBuffers(const Schedule& schedule, const OpFamily& family);

}  // namespace zosched
