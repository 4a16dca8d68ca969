// Reading protobuf text format (textproto) with errors a user can act on.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "base/files.h"
#include "google/protobuf/message.h"

namespace zosched {

// Parses `text` into `*out` (cleared first). `source` names where the text
// came from (a file path) and prefixes every error.
//
// Errors: InvalidArgument "SOURCE:LINE:COLUMN: MESSAGE" (1-based line and
// column, the parser's message) for the first syntax or schema error.
absl::Status ParseTextProto(const std::string& text, const std::string& source,
                            google::protobuf::Message* out);

// Reads the file at `path` and parses it as ParseTextProto does.
//
// Errors: NotFound if the file cannot be opened (with the OS reason);
// InvalidArgument for a path ReadFileToString refuses (a directory, a
// device, a file above 1 GiB), for an empty file, and as ParseTextProto,
// with `path` as the source.
absl::Status ReadTextProtoFile(const std::string& path,
                               google::protobuf::Message* out);

}  // namespace zosched
