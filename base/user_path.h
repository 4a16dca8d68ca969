// Paths typed by a user on the command line.
#pragma once

#include <string>

namespace zosched {

// Returns `path` as the user meant it. `bazel run` starts programs in their
// runfiles tree and sets BUILD_WORKING_DIRECTORY to the directory the user
// typed the command in: a relative path is resolved against that. Absolute
// paths, and every path when the program was started directly, are returned
// unchanged.
std::string ResolveUserPath(const std::string& path);

}  // namespace zosched
