// A new, empty directory of this process's own under $TMPDIR (or /tmp when
// TMPDIR is unset or empty), for files that must not go where the user's
// outputs go. The caller removes it.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace zosched {

// Makes $TMPDIR/NAME.XXXXXX (mkdtemp) and returns its path. `what` says
// what it is for, in the error. Errors: Internal "cannot make a directory
// for WHAT (PATH): REASON; set TMPDIR to a writable directory".
absl::StatusOr<std::string> MakeTemporaryDirectory(const std::string& name,
                                                   const std::string& what);

}  // namespace zosched
