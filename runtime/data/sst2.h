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
// per line "SENTENCE<TAB>LABEL" with LABEL 0 or 1. The sentence is what
// precedes the last tab. Lines may end in "\r\n"; blank lines are skipped.
// `source` names the text in errors.
//
// Errors: InvalidArgument "SOURCE:LINE: ..." for an empty input, a wrong
// header, a line that is not UTF-8, a row without a tab, or a label other
// than 0/1.
absl::StatusOr<std::vector<Sst2Example>> ParseSst2Tsv(absl::string_view text,
                                                      const std::string& source);

// Reads and parses the file at `path` (errors name it). Errors: NotFound if
// it cannot be read; ParseSst2Tsv's.
absl::StatusOr<std::vector<Sst2Example>> ReadSst2Tsv(const std::string& path);

}  // namespace zosched
