#include "base/textproto.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace zosched {
namespace {

// Keeps the first error the parser reports (later ones are usually echoes).
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error_) return;
    has_error_ = true;
    line_ = line;
    column_ = column;
    message_ = message;
  }

  bool has_error() const { return has_error_; }
  // Parser positions are 0-based; editors count from 1.
  std::string Describe(const std::string& source) const {
    return absl::StrFormat("%s:%d:%d: %s", source, line_ + 1, column_ + 1,
                           message_);
  }

 private:
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

}  // namespace

absl::Status ParseTextProto(const std::string& text, const std::string& source,
                            google::protobuf::Message* out) {
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, out)) {
    if (errors.has_error()) {
      return absl::InvalidArgumentError(errors.Describe(source));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a valid %s textproto", source,
                        out->GetDescriptor()->full_name()));
  }
  return absl::OkStatus();
}

absl::Status ReadTextProtoFile(const std::string& path,
                               google::protobuf::Message* out) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(path, &text));
  if (text.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is empty; expected a %s textproto", path, out->GetDescriptor()->full_name()));
  }
  return ParseTextProto(text, path, out);
}

}  // namespace zosched
