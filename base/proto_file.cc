#include "base/proto_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "base/textproto.h"
#include "google/protobuf/text_format.h"

namespace zosched {

bool IsTextProtoPath(const std::string& path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".textproto") ||
         absl::EndsWith(path, ".txtpb");
}

absl::Status ReadProtoFile(const std::string& path, google::protobuf::Message* out) {
  if (IsTextProtoPath(path)) return ReadTextProtoFile(path, out);
  std::string bytes;
  RETURN_IF_ERROR(ReadFileToString(path, &bytes));
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is empty; expected a binary %s", path, out->GetDescriptor()->full_name()));
  }
  if (!out->ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not a valid binary %s (text files must end in .pbtxt)", path,
        out->GetDescriptor()->full_name()));
  }
  return absl::OkStatus();
}

absl::Status WriteProtoFile(const std::string& path,
                            const google::protobuf::Message& message) {
  std::string bytes;
  if (IsTextProtoPath(path)) {
    bytes = absl::StrFormat("# proto-message: %s\n",
                            message.GetDescriptor()->full_name());
    std::string text;
    google::protobuf::TextFormat::PrintToString(message, &text);
    bytes += text;
  } else {
    message.SerializeToString(&bytes);
  }
  return WriteFile(path, bytes);
}

}  // namespace zosched
