#include "runtime/data/boolq.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "runtime/data/text_lines.h"

namespace zosched {
namespace {

// Parses the lines `for_each_line` visits (ForEachLine or ForEachFileLine).
absl::StatusOr<std::vector<BoolqExample>> ParseLines(
    absl::FunctionRef<absl::Status(LineVisitor)> for_each_line, const std::string& source) {
  using Json = nlohmann::json;
  std::vector<BoolqExample> examples;
  RETURN_IF_ERROR(for_each_line([&](int line_number, absl::string_view line) {
    if (line.empty()) return absl::OkStatus();
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
    return absl::OkStatus();
  }));
  if (examples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": no examples: a train or dev set needs at least one line holding a JSON "
                "object {\"question\": \"...\", \"passage\": \"...\", \"answer\": true or false}"));
  }
  return examples;
}

}  // namespace

absl::StatusOr<std::vector<BoolqExample>> ParseBoolqJsonl(absl::string_view text,
                                                          const std::string& source) {
  return ParseLines([&](LineVisitor visit) { return ForEachLine(text, source, visit); }, source);
}

absl::StatusOr<std::vector<BoolqExample>> ReadBoolqJsonl(const std::string& path) {
  return ParseLines([&](LineVisitor visit) { return ForEachFileLine(path, visit); }, path);
}

}  // namespace zosched
