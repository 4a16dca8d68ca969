// Reading the task data files (SST-2 TSV, BoolQ JSONL) line by line, with
// what every such file needs: a limit on a line's length, checked before a
// line is held whole in memory; Windows line endings and a leading UTF-8
// byte order mark accepted; and file:line in errors.
#pragma once

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace zosched {

// The longest line a data file may have, in bytes without its line ending:
// 1 MiB, far above any SST-2 sentence (a few hundred bytes) or BoolQ record
// (a few KB). A longer line is refused, not read and tokenized.
inline constexpr int64_t kMaxDataLineBytes = int64_t{1} << 20;

// Called with each line's 1-based number and its text (valid only during the
// call); an error it returns stops the reading and is returned as it is.
using LineVisitor = absl::FunctionRef<absl::Status(int line_number, absl::string_view line)>;

// Calls `visit` for each line of `text`, in order: the text between line
// breaks, without its "\n" or "\r\n" ("\r" before "\n" or at the end of the
// text is dropped), and without a UTF-8 byte order mark (EF BB BF) at the
// start of the text. A text that ends in "\n" has no empty line after it; an
// empty text has no lines. `source` names the text in errors.
//
// Errors: InvalidArgument "SOURCE:LINE: line is longer than 1048576 bytes
// ..." for a line above kMaxDataLineBytes; `visit`'s first error.
absl::Status ForEachLine(absl::string_view text, const std::string& source, LineVisitor visit);

// As ForEachLine, for the file at `path` (errors name it), read in blocks of
// 64 KiB: a line above the limit is refused after at most the limit plus one
// block of it has been read, and lines are never all in memory at once.
//
// Errors: RegularFileBytes' (base/files.h: NotFound "cannot open PATH:
// REASON", InvalidArgument for a directory, a FIFO or a device, which would
// block or never end); NotFound when the file cannot be opened; DataLoss
// when reading fails; ForEachLine's.
absl::Status ForEachFileLine(const std::string& path, LineVisitor visit);

}  // namespace zosched
