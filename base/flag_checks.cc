#include "base/flag_checks.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace zosched {

absl::Status CheckFlagRange(const char* flag, int64_t value, int64_t low, int64_t high,
                            const char* what) {
  if (value >= low && value <= high) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s=%d: expected %d to %d (%s)", flag, value, low, high, what));
}

absl::Status CheckFlagFinite(const char* flag, double value, bool positive, const char* what) {
  if (std::isfinite(value) && (positive ? value > 0 : value >= 0)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("--%s=%g: expected a finite value %s (%s)",
                                                    flag, value, positive ? "> 0" : ">= 0", what));
}

}  // namespace zosched
