// Reading and writing whole files.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace zosched {

// The largest file ReadFileToString reads unless told otherwise: 1 GiB, far
// above any schedule, cluster, model, tokenizer or dataset file the tools
// read (an OPT-175B schedule in text is a few MB).
constexpr int64_t kMaxReadBytes = int64_t{1} << 30;

// Reads the whole regular file at `path` into `out`. Checks what the path is
// before opening it, so that a directory, a device (/dev/zero would read
// forever) or a FIFO (would block) is refused, not read.
//
// Errors: NotFound naming `path` and the OS reason when it does not exist or
// cannot be opened; InvalidArgument when it is a directory, not a regular
// file, or larger than `max_bytes` (naming its size and the limit);
// DataLoss when reading fails.
absl::Status ReadFileToString(const std::string& path, std::string* out,
                              int64_t max_bytes = kMaxReadBytes);

// Writes `contents` to `path`, replacing it. Errors: the OS error's code
// (NotFound, PermissionDenied, ...) naming `path` when it cannot be created;
// DataLoss when writing fails.
absl::Status WriteFile(const std::string& path, const std::string& contents);

// fsyncs the file at `path` (written by anyone, through any descriptor) to
// disk. Errors: the OS error's code naming the path.
absl::Status SyncFile(const std::string& path);

// fsyncs the directory holding `path`, so that a rename or creation of
// `path` is itself on disk (after fsync of the file and a rename, the last
// step of an atomic replace). Errors: the OS error's code naming the
// directory.
absl::Status SyncParentDirectory(const std::string& path);

}  // namespace zosched
