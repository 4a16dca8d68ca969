#include "base/user_path.h"

#include <cstdlib>

namespace zosched {

std::string ResolveUserPath(const std::string& path) {
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || cwd == nullptr || cwd[0] == '\0') {
    return path;
  }
  return std::string(cwd) + "/" + path;
}

}  // namespace zosched
