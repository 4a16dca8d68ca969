// Reading and writing whole files.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zosched {

// The largest file ReadFileToString reads unless told otherwise: 1 GiB, far
// above any schedule, cluster, model, tokenizer or dataset file the tools
// read (an OPT-175B schedule in text is a few MB).
constexpr int64_t kMaxReadBytes = int64_t{1} << 30;

// The size in bytes of the file at `path` (symbolic links followed), found
// without opening it after checking that it is a regular file: so a reader
// never opens a directory, a device (/dev/zero would read forever) or a FIFO
// (opening it blocks until a writer comes). `expected` names what the caller
// reads, for the message: "a file", "a .safetensors file".
//
// Errors: NotFound "cannot open PATH: REASON" when it cannot be looked at
// (missing, a directory on the way not searchable, ...); InvalidArgument
// "PATH is a directory; expected EXPECTED" or "PATH is not a regular file
// (a character device); expected EXPECTED" (a block device, a FIFO, a
// socket).
absl::StatusOr<int64_t> RegularFileBytes(const std::string& path, absl::string_view expected);

// Reads the whole regular file at `path` into `out`. Checks what the path is
// before opening it (RegularFileBytes), so that a directory, a device or a
// FIFO is refused, not read.
//
// Errors: RegularFileBytes'; InvalidArgument when it is larger than
// `max_bytes` (naming its size and the limit); NotFound when it cannot be
// opened; DataLoss when reading fails.
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
