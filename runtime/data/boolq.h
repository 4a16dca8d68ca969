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

// Parses BoolQ JSONL text. Lines may end in "\r\n"; blank lines are skipped.
// `source` names the text in errors.
//
// Errors: InvalidArgument "SOURCE:LINE: ..." for a line that is not a JSON
// object (with the parser's message), or lacks a string "question" or
// "passage", or a boolean "answer" (or "label").
absl::StatusOr<std::vector<BoolqExample>> ParseBoolqJsonl(absl::string_view text,
                                                          const std::string& source);

// Reads and parses the file at `path` (errors name it). Errors: NotFound if
// it cannot be read; ParseBoolqJsonl's.
absl::StatusOr<std::vector<BoolqExample>> ReadBoolqJsonl(const std::string& path);

}  // namespace zosched
