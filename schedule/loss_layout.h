// Where each per-example loss of a step lies in a device's LOSSES buffer
// once the step's HEAD_LOSS ops and loss all-gathers have run: the layout a
// PROJECTED_GRADIENT reads, so that every backend gathers L+ and L- of each
// example from the right place and reduces them in example order.
//
// A device's own HEAD_LOSS ops put example first_example + k of their sign
// and direction at element losses.offset / 4 + k. An ALL_GATHER whose recv lies in a
// LOSSES buffer brings participant r's send range (holding that
// participant's own losses) to recv.offset + r · send.size.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct LossLayout {
  int buffer = -1;             // index of the LOSSES buffer in Schedule.buffers
  // Per direction i and example e of the batch, at i · batch + e (q ·
  // batch entries, q = DirectionsOf): the element index of L+ ...
  std::vector<int64_t> plus;
  std::vector<int64_t> minus;  // ... and of L-
};

// The layout of device `device`'s losses. The schedule must pass
// ValidateScheduleStructure (references resolve).
//
// Errors: InvalidArgument naming the example, the sign, the direction and
// the op(s) when an (example, sign, direction) loss is written twice, lands
// outside the batch or the step's directions, or never reaches the device,
// or when the device's losses are spread over more than one LOSSES buffer.
absl::StatusOr<LossLayout> DeviceLossLayout(const Schedule& schedule, int device);

// The layouts of every device, in device order (indexing the schedule once).
// Errors: those of DeviceLossLayout.
absl::StatusOr<std::vector<LossLayout>> AllLossLayouts(const Schedule& schedule);

}  // namespace zosched
