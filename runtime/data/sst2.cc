#include "runtime/data/sst2.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/data/text_lines.h"
#include "runtime/data/utf8.h"

namespace zosched {
namespace {

// Parses the lines `for_each_line` visits (ForEachLine or ForEachFileLine).
absl::StatusOr<std::vector<Sst2Example>> ParseLines(
    absl::FunctionRef<absl::Status(LineVisitor)> for_each_line, const std::string& source) {
  std::vector<Sst2Example> examples;
  bool seen_header = false;
  RETURN_IF_ERROR(for_each_line([&](int line_number, absl::string_view line) {
    if (line.empty()) return absl::OkStatus();
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
      return absl::OkStatus();
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
    return absl::OkStatus();
  }));
  if (!seen_header) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": empty, expected the header 'sentence<TAB>label'"));
  }
  if (examples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": no examples after the header: a train or dev set needs at least one row "
                "'SENTENCE<TAB>LABEL' (LABEL 0 or 1)"));
  }
  return examples;
}

}  // namespace

absl::StatusOr<std::vector<Sst2Example>> ParseSst2Tsv(absl::string_view text,
                                                      const std::string& source) {
  return ParseLines([&](LineVisitor visit) { return ForEachLine(text, source, visit); }, source);
}

absl::StatusOr<std::vector<Sst2Example>> ReadSst2Tsv(const std::string& path) {
  return ParseLines([&](LineVisitor visit) { return ForEachFileLine(path, visit); }, path);
}

}  // namespace zosched
