// Reading and writing whole files.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace zosched {

// Reads a whole file into a string. Errors: NotFound naming `path` and the
// OS reason when it cannot be opened; DataLoss when reading fails.
absl::Status ReadFileToString(const std::string& path, std::string* out);

// Writes `contents` to `path`, replacing it. Errors: the OS error's code
// (NotFound, PermissionDenied, ...) naming `path` when it cannot be created;
// DataLoss when writing fails.
absl::Status WriteFile(const std::string& path, const std::string& contents);

}  // namespace zosched
