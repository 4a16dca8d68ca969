// A lower bound on the simulated step time of a schedule, cheap enough to
// decide whether a configuration of a sweep can win before simulating it.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Nanoseconds no simulation of `schedule` (a validated schedule) can beat:
// the largest of
//   - each stream's compute ops back to back at CostModel::ComputeNs (ops of
//     one stream run one after another, and the simulator only ever slows
//     compute down: contention, shared cores);
//   - each device's host-link bytes over its link: host-to-device bytes /
//     down_gbps, device-to-host bytes / up_gbps and, with a duplex cap, both
//     over duplex_gbps (flows never exceed a link's capacity). Skipped when
//     the cluster has measured transfers, which may beat the link figures.
// Copies' latencies, collectives and dependencies only add to these.
//
// Errors: those of CostModel::Build and CostModel::ComputeNs (a figure the
// cluster lacks).
absl::StatusOr<int64_t> StepFloorNs(const Schedule& schedule);

}  // namespace zosched
