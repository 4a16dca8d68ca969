#include "base/temporary_directory.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace zosched {

absl::StatusOr<std::string> MakeTemporaryDirectory(const std::string& name,
                                                   const std::string& what) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp", "/", name,
                                  ".XXXXXX");
  if (mkdtemp(path.data()) == nullptr) {
    return absl::InternalError(
        absl::StrFormat("cannot make a directory for %s (%s): %s; set TMPDIR to a writable "
                        "directory",
                        what, path, std::strerror(errno)));
  }
  return path;
}

}  // namespace zosched
