#include "base/files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace zosched {

absl::Status ReadFileToString(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrFormat("cannot open %s: %s", path, std::strerror(errno)));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(
        absl::StrFormat("error reading %s: %s", path, std::strerror(errno)));
  }
  *out = buffer.str();
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return absl::ErrnoToStatus(errno, absl::StrCat("cannot write ", path));
  file << contents;
  file.close();
  if (!file) {
    return absl::DataLossError(
        absl::StrFormat("error writing %s: %s", path, std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace zosched
