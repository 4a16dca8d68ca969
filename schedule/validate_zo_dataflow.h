// The checks of a ZO step as a whole, across its ops (schedule/validate_ops.h
// steps 6 and 7 run them on a ZO schedule whose every op passed its own
// checks): the residual streams, the updates, the losses every projected
// gradient reads and every device's parameter homes.
#pragma once

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Returns OK if, on each device in compute-stream order, each residual
// stream (an activations range) starts at an EMBED and passes every block in
// order, 0 .. L-1, before its HEAD_LOSS, all with one sign and one example
// range; no parameter element is updated twice in the step by one device;
// every device receives the L+ and L- of every example exactly once
// (schedule/loss_layout.h) and its one PROJECTED_GRADIENT reads all of them;
// and every device's parameters have a home (schedule/param_homes.h).
// Errors: InvalidArgument naming the op or the device, what was found and
// what was expected.
absl::Status ValidateZoDataflow(const Schedule& schedule);

}  // namespace zosched
