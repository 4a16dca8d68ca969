// Range checks for command-line flags, with the one message form every tool
// gives: the flag, the value found and the valid range, e.g.
// "--batch=-3: expected 1 to 1048576 (examples per step)".
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace zosched {

// OK if low <= value <= high; else InvalidArgument naming `flag` (without
// dashes), `value`, the range and `what` the value counts.
absl::Status CheckFlagRange(const char* flag, int64_t value, int64_t low, int64_t high,
                            const char* what);

// OK if `value` is finite and > 0 (`positive`) or >= 0; else InvalidArgument
// naming `flag`, `value`, the range and `what` it is.
absl::Status CheckFlagFinite(const char* flag, double value, bool positive, const char* what);

}  // namespace zosched
