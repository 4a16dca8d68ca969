#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace zosched {
namespace check_internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  message_ << file << ":" << line << ": CHECK failed: " << condition << " ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", message_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace check_internal
}  // namespace zosched
