#include "runtime/data/boolq.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/textproto.h"
#include "nlohmann/json.hpp"

namespace zosched {

absl::StatusOr<std::vector<BoolqExample>> ParseBoolqJsonl(absl::string_view text,
                                                          const std::string& source) {
  using Json = nlohmann::json;
  std::vector<BoolqExample> examples;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = absl::StrCat(source, ":", line_number, ": ");
    Json json;
    try {
      json = Json::parse(line.begin(), line.end());
    } catch (const Json::exception& e) {  // parse_error; out_of_range for a number like 1e999
      return absl::InvalidArgumentError(absl::StrCat(where, "not valid JSON: ", e.what()));
    }
    if (!json.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(where, "not a JSON object"));
    }
    BoolqExample example;
    for (const char* field : {"question", "passage"}) {
      auto it = json.find(field);
      if (it == json.end() || !it->is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(where, "no string \"", field, "\""));
      }
      (field[0] == 'q' ? example.question : example.passage) = it->get<std::string>();
    }
    auto answer = json.find("answer");
    if (answer == json.end()) answer = json.find("label");
    if (answer == json.end() || !answer->is_boolean()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "no boolean \"answer\" (or \"label\")"));
    }
    example.answer = answer->get<bool>();
    examples.push_back(std::move(example));
  }
  return examples;
}

absl::StatusOr<std::vector<BoolqExample>> ReadBoolqJsonl(const std::string& path) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseBoolqJsonl(text, path);
}

}  // namespace zosched
