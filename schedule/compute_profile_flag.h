// The --compute_profile flag of lower and sim_benchmark: how the simulator
// costs GPU compute (schedule.proto's ComputeProfile).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The profile `value` names, in any case: roofline, zosched_cuda,
// pytorch_mezo, pytorch_zo2, pytorch_first_order or megatron_first_order.
//
// Errors: InvalidArgument "--compute_profile='VALUE': expected roofline,
// zosched_cuda, pytorch_mezo or pytorch_zo2 (ZO schedules), or
// pytorch_first_order or megatron_first_order (first-order ones)".
absl::StatusOr<ComputeProfile> ParseComputeProfileFlag(const std::string& value);

}  // namespace zosched
