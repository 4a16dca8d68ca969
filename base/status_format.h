// An InvalidArgument error with a formatted message, the error the code
// returns most (a file, flag or schedule field that is wrong).
#pragma once

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace zosched {

// absl::InvalidArgumentError(absl::StrFormat(format, args...)).
template <typename... Args>
absl::Status InvalidArgument(const absl::FormatSpec<Args...>& format, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrFormat(format, args...));
}

}  // namespace zosched
