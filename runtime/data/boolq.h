// BoolQ (yes/no questions about a passage) in its JSON-lines form: one
// object per line, {"question": "...", "passage": "...", "answer": true},
// as in the original release's train.jsonl and dev.jsonl. SuperGLUE's copy
// names the answer "label" instead; that is accepted too. Other fields
// ("title", "idx") are ignored.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zosched {

struct BoolqExample {
  std::string question;
  std::string passage;
  bool answer = false;
};

// Parses BoolQ JSONL text, at least one example. Lines are read by
// ForEachLine (text_lines.h): they may end in "\r\n", the text may start
// with a UTF-8 byte order mark, and a line may hold at most
// kMaxDataLineBytes (1 MiB). Blank lines are skipped. `source` names the
// text in errors.
//
// Errors: InvalidArgument "SOURCE:LINE: ..." for a line that is not a JSON
// object (with the parser's message), or lacks a string "question" or
// "passage", or a boolean "answer" (or "label"), or is above the limit;
// "SOURCE: no examples ..." for a text without any.
absl::StatusOr<std::vector<BoolqExample>> ParseBoolqJsonl(absl::string_view text,
                                                          const std::string& source);

// As ParseBoolqJsonl, for the file at `path` (errors name it), read line by
// line (ForEachFileLine: a line above the limit is refused before it is read
// whole). Errors: ForEachFileLine's (NotFound if it cannot be opened, ...);
// ParseBoolqJsonl's.
absl::StatusOr<std::vector<BoolqExample>> ReadBoolqJsonl(const std::string& path);

}  // namespace zosched
