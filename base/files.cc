#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace zosched {

namespace {

// What kind of non-regular file `mode` is, for messages.
const char* FileKind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

absl::StatusOr<int64_t> RegularFileBytes(const std::string& path, absl::string_view expected) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(absl::StrFormat("cannot open %s: %s", path, std::strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is a directory; expected %s", path, expected));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a regular file (%s); expected %s", path, FileKind(info.st_mode), expected));
  }
  return static_cast<int64_t>(info.st_size);
}

absl::Status ReadFileToString(const std::string& path, std::string* out, int64_t max_bytes) {
  const absl::StatusOr<int64_t> bytes = RegularFileBytes(path, "a file");
  if (!bytes.ok()) return bytes.status();
  if (*bytes > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is %d bytes, above the limit of %d bytes for this kind of file",
                        path, *bytes, max_bytes));
  }
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

absl::Status SyncFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  const int failed = fsync(fd);
  const int error = errno;
  close(fd);
  if (failed != 0) return absl::ErrnoToStatus(error, absl::StrCat("cannot sync ", path));
  return absl::OkStatus();
}

absl::Status SyncParentDirectory(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open directory ", dir));
  const int failed = fsync(fd);
  const int error = errno;
  close(fd);
  if (failed != 0) return absl::ErrnoToStatus(error, absl::StrCat("cannot sync directory ", dir));
  return absl::OkStatus();
}

}  // namespace zosched
