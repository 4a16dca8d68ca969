#include "base/output_dir.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/str_format.h"
#include "base/user_path.h"

namespace zosched {

std::string OutputDir(const std::string& flag, const std::string& name) {
  if (!flag.empty()) return ResolveUserPath(flag);
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  const std::string root = workspace != nullptr && workspace[0] != '\0' ? workspace : ".";
  return root + "/out/" + name;
}

absl::StatusOr<bool> DirectoryHasEntries(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    return absl::ErrnoToStatus(errno, absl::StrFormat("cannot read %s", path));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s is not a directory", path));
  }
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return absl::ErrnoToStatus(errno, absl::StrFormat("cannot read %s", path));
  bool entries = false;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") {
      entries = true;
      break;
    }
  }
  closedir(dir);
  return entries;
}

absl::Status MakeDirectories(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrFormat("cannot create directory %s: %s", prefix, std::strerror(errno)));
    }
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InternalError(absl::StrFormat("%s is not a directory", path));
  }
  return absl::OkStatus();
}

}  // namespace zosched
