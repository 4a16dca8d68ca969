// Reading and writing whole protobuf messages as files, text or binary by
// the file name: ".pbtxt", ".textproto" and ".txtpb" are text format (with a
// "# proto-message:" header when written); anything else is binary wire
// format (compact: an OPT-175B schedule is megabytes as text).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace zosched {

// True if `path` names a text-format file.
bool IsTextProtoPath(const std::string& path);

// Reads `path` into `*out`. Errors: NotFound if it cannot be opened;
// InvalidArgument for a path ReadFileToString refuses (a directory, a
// device, a file above 1 GiB), an empty file, "FILE:LINE:COLUMN: ..." for
// malformed text, or "FILE: not a valid binary MESSAGE" for a binary file
// that does not parse.
absl::Status ReadProtoFile(const std::string& path, google::protobuf::Message* out);

// Writes `message` to `path` (replacing it). Errors as WriteFile (files.h).
absl::Status WriteProtoFile(const std::string& path,
                            const google::protobuf::Message& message);

}  // namespace zosched
