// The transfers both backends run: copies between a device and its host
// (never between devices) and ALL_GATHER collectives.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// OK unless `op` is a peer copy (DEVICE_TO_DEVICE) or a collective other
// than ALL_GATHER. Errors: InvalidArgument naming the op and saying what
// `runtime` (the backend as its messages name it, e.g. "the CPU runtime")
// runs instead.
absl::Status CheckTransferSupported(const Op& op, std::string_view runtime);

}  // namespace zosched
