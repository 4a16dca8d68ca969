#include "runtime/data/sst2.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/textproto.h"
#include "runtime/data/utf8.h"

namespace zosched {

absl::StatusOr<std::vector<Sst2Example>> ParseSst2Tsv(absl::string_view text,
                                                      const std::string& source) {
  std::vector<Sst2Example> examples;
  bool seen_header = false;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = absl::StrCat(source, ":", line_number, ": ");
    if (const size_t bad = FirstInvalidUtf8(line); bad != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "invalid UTF-8 at byte ", bad + 1,
          " of the line (SST-2 files are UTF-8; convert the file, e.g. with iconv)"));
    }
    if (!seen_header) {
      if (line != "sentence\tlabel") {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "header '", line, "' is not 'sentence<TAB>label' (GLUE SST-2 train/dev)"));
      }
      seen_header = true;
      continue;
    }
    const size_t tab = line.rfind('\t');
    if (tab == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "expected 'SENTENCE<TAB>LABEL', found no tab"));
    }
    const absl::string_view label = line.substr(tab + 1);
    if (label != "0" && label != "1") {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "label '", label, "' is not 0 or 1"));
    }
    examples.push_back({std::string(line.substr(0, tab)), label == "1" ? 1 : 0});
  }
  if (!seen_header) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": empty, expected the header 'sentence<TAB>label'"));
  }
  return examples;
}

absl::StatusOr<std::vector<Sst2Example>> ReadSst2Tsv(const std::string& path) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseSst2Tsv(text, path);
}

}  // namespace zosched
