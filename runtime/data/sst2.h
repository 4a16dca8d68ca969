// GLUE SST-2 (Stanford Sentiment Treebank, binary) in its GLUE TSV form, as
// in train.tsv and dev.tsv of the GLUE distribution.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zosched {

struct Sst2Example {
  std::string sentence;
  int label = 0;  // 0 negative, 1 positive
};

// Parses SST-2 TSV text: a header line "sentence<TAB>label", then one row
// per line "SENTENCE<TAB>LABEL" with LABEL 0 or 1, at least one row. The
// sentence is what precedes the last tab. Lines are read by ForEachLine
// (text_lines.h): they may end in "\r\n", the text may start with a UTF-8
// byte order mark, and a line may hold at most kMaxDataLineBytes (1 MiB).
// Blank lines are skipped. `source` names the text in errors.
//
// Errors: InvalidArgument "SOURCE:LINE: ..." for a wrong header, a line
// that is not UTF-8, a row without a tab, a label other than 0/1, or a line
// above the limit; "SOURCE: ..." for an empty input or one without rows.
absl::StatusOr<std::vector<Sst2Example>> ParseSst2Tsv(absl::string_view text,
                                                      const std::string& source);

// As ParseSst2Tsv, for the file at `path` (errors name it), read line by line
// (ForEachFileLine: a line above the limit is refused before it is read
// whole). Errors: ForEachFileLine's (NotFound if it cannot be opened, ...);
// ParseSst2Tsv's.
absl::StatusOr<std::vector<Sst2Example>> ReadSst2Tsv(const std::string& path);

}  // namespace zosched
