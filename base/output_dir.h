// Where the programs (train, the experiments) write their results.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/files.h"  // WriteFile, for the experiments writing results

namespace zosched {

// The directory an experiment writes to: `flag` if set (a relative path is
// taken from where the user typed the command, see base/user_path.h); else
// "out/<name>" in the workspace (BUILD_WORKSPACE_DIRECTORY under `bazel
// run`), else "out/<name>" in the current directory.
std::string OutputDir(const std::string& flag, const std::string& name);

// Whether `path` is a directory with at least one entry (false when it
// does not exist). Errors: InvalidArgument when it exists but is not a
// directory; the OS error's code when it cannot be read.
absl::StatusOr<bool> DirectoryHasEntries(const std::string& path);

// Creates `path` and its missing parents (like `mkdir -p`).
// Errors: PermissionDenied / Internal naming the path and the OS reason.
absl::Status MakeDirectories(const std::string& path);

}  // namespace zosched
